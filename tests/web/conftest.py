"""The web layer's tests import Gradio: where it is not installed, this folder skips, saying so."""

from tests.conftest import need_web_layer

need_web_layer("tests/web")
