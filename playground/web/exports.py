"""One temporary folder per process for what the page serves (Compare downloads, Gradio's own files).

Gradio keeps the files it serves, and anything POSTed to its /upload route, under
GRADIO_TEMP_DIR (default /tmp/gradio, never cleaned): it is pointed inside this
folder, which is removed at exit. Gradio reads the variable when it is imported, so
this module is imported before Gradio (the page's modules import it first). Set,
not defaulted: a value inherited from a parent process would point at the parent's folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

EXPORTS = Path(tempfile.mkdtemp(prefix="playground-exports-"))
atexit.register(shutil.rmtree, EXPORTS, ignore_errors=True)
os.environ["GRADIO_TEMP_DIR"] = str(EXPORTS / "gradio")


def new_folder() -> Path:
    """A fresh folder for one download."""
    return Path(tempfile.mkdtemp(dir=EXPORTS))
