"""One temporary folder per process for what the page serves (Compare downloads, Gradio's own files).

Gradio keeps the files it serves, and anything POSTed to its /upload route, under
GRADIO_TEMP_DIR (default /tmp/gradio, never cleaned): it is pointed inside this
folder, which is removed at exit and at a graceful shutdown (`remove`). Gradio reads
the variable when it is imported, so this module is imported before Gradio (the
page's modules import it first). Set, not defaulted: a value inherited from a parent
process would point at the parent's folder. The folder's name carries this process's
pid and start time (`playground.core.leftovers`), so one left by a killed server is
removed at the next start (`sweep`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from playground.core import leftovers

PREFIX = "playground-exports-"
EXPORTS = leftovers.make(PREFIX)
atexit.register(shutil.rmtree, EXPORTS, ignore_errors=True)
os.environ["GRADIO_TEMP_DIR"] = str(EXPORTS / "gradio")


def new_folder() -> Path:
    """A fresh folder for one download."""
    return Path(tempfile.mkdtemp(dir=EXPORTS))


def sweep() -> list[Path]:
    """Remove the export folders of servers that are gone (killed, crashed): at start-up."""
    return leftovers.sweep(tempfile.gettempdir(), PREFIX)


def remove() -> bool:
    """Remove this process's folder now (a graceful shutdown); True when it is gone."""
    shutil.rmtree(EXPORTS, ignore_errors=True)
    return not EXPORTS.exists()
