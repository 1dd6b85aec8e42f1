"""Where the playground's own files are, and the roles by which a message names a server's folders.

A message a visitor sees never quotes an absolute path of the server (on a public
Space it would reveal the machine's layout): `by_role` rewrites the known folders
to "the bundled models folder", "the Hugging Face cache", and so on.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from playground.core import settings
from playground.core.i18n import t

PACKAGE = Path(__file__).resolve().parent.parent
REPO = PACKAGE.parent
ASSETS = PACKAGE / "assets"
BUNDLED_NAME = "shakespeare-gpt2"
BUNDLED_DIR = ASSETS / BUNDLED_NAME


def roles(lang: str = "en") -> list[tuple[Path, str]]:
    """The server's folders a message might quote, each with the role it is named by, most specific first."""
    # deferred (environment): huggingface_hub reads HF_HUB_DISABLE_PROGRESS_BARS once, when first imported;
    # `python -m playground` imports this module before its quiet_libraries() sets that variable.
    from huggingface_hub import constants

    s = settings.read()
    named = [(BUNDLED_DIR.parent, "path.bundled"), (s.synthetic_dir, "path.synthetic"),
             (Path(constants.HF_HUB_CACHE), "path.hf_cache"), *[(d, "path.model_dirs") for d in s.model_dirs],
             (PACKAGE, "path.package"), (REPO, "path.repo"), (Path(tempfile.gettempdir()), "path.tmp"),
             (Path.home(), "path.home")]
    out = []
    for folder, key in named:
        for form in {str(folder), str(folder.expanduser().resolve())}:
            out.append((Path(form), t(key, lang)))
    return sorted(out, key=lambda fr: -len(str(fr[0])))


def by_role(text: str, lang: str = "en") -> str:
    """`text` with every absolute path under a known server folder replaced by the folder's role
    ("/home/x/.cache/huggingface/hub/models--gpt2/..." -> "the Hugging Face cache/models--gpt2/...")."""
    for folder, role in roles(lang):
        text = re.sub(re.escape(str(folder)) + r"(?=/|\b|$)", lambda _m, r=role: r, text)
    return text
