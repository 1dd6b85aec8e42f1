"""A virtual environment like the bare CUDA image's: every package of this one but the web layer's.

`bare_venv(folder)` makes a venv (no pip) whose site-packages links every entry of this environment's
except the files of the distributions in `ABSENT` (gradio, gradio_client and pandas, which the GPU
machine's image does not have): `import gradio` fails there as it does on that machine, and
`importlib.util.find_spec` and package metadata say the package is not installed. Returns its python.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

ABSENT = ("gradio", "gradio_client", "pandas", "hf-gradio")


def _top_entries(dist: str) -> set[str]:
    """The names directly under site-packages that a distribution installed (its packages, its .dist-info)."""
    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError:
        return set()
    return {f.parts[0] for f in files if f.parts and f.parts[0] != ".."}


def bare_venv(folder: Path, absent: tuple[str, ...] = ABSENT) -> Path:
    """A venv at `folder` with this environment's packages, less `absent`'s; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    here = Path(sysconfig.get_paths()["purelib"])
    there = folder / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    hidden = set().union(*(_top_entries(d) for d in absent))
    for entry in here.iterdir():
        if entry.name not in hidden and entry.name != "__pycache__":
            (there / entry.name).symlink_to(entry)
    return folder / "bin" / "python"
