"""A broken script run as written in a Python process of its own, for mistakes that a GPU answers with a
device-side assert.

A CUDA kernel that checks its data (the sampler's "probability tensor contains either `inf`, `nan` or
element < 0", an index out of range) cannot raise a Python exception: it stops, and the next CUDA call
raises "CUDA error: device-side assert triggered". From then on the process's CUDA context is unusable:
every later CUDA call raises the same error, until the process ends. Run in the server (or a test
session) such a mistake would break every visitor's GPU work after it; run here, in a child, it breaks
only the child. `run_apart(script)` runs the complete script with `python` from the repository root
(the script picks its own device), and returns what it raised (type, base classes, message, frames),
what it printed, and the lines the kernel printed for its assert (device-side `printf` output, on the
child's stdout).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from playground.core.paths import REPO

TIMEOUT_SECONDS = 240  # the child imports torch and Transformers and loads the bundled model: seconds
SCRIPT_NAME = "<broken script>"  # the name the lab runs a broken script under in-process (lab/capture.py)
KERNEL_MARK = "Assertion `"  # how a CUDA kernel's failed assert begins its line ("...: block: [0,0,0] ... Assertion `")

# The child: the script runs as `__main__` (as `python FILE` runs it); what it raised is written as JSON beside
# it, then raised again, so that the child's stderr and exit status are those of `python FILE`.
_CHILD = """
import json, runpy, sys, traceback
script, report = sys.argv[1], sys.argv[2]
sys.argv = [script]
try:
    runpy.run_path(script, run_name="__main__")
except BaseException as exc:
    tb = traceback.extract_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(tb) if f.filename == script), 0)  # the script's frames on
    with open(report, "w") as f:
        json.dump({"type": type(exc).__name__, "message": str(exc),
                   "bases": [c.__name__ for c in type(exc).__mro__[1:]
                             if c not in (object, BaseException, Exception)],
                   "frames": [[f.filename, f.lineno, f.name, f.line] for f in tb[first:]]}, f)
    raise
"""


@dataclass
class Apart:
    """What the script did in its own process."""

    raised: bool
    error_type: str | None = None
    error_bases: list[str] = field(default_factory=list)
    error_message: str | None = None
    output: str = ""  # what the script printed (its stdout, less the kernel's assert lines)
    frames: list[traceback.FrameSummary] = field(default_factory=list)  # from the script's first frame on;
    # the script's own file named as the lab names a script it runs in-process (no server path is shown)
    kernel_lines: list[str] = field(default_factory=list)  # the device's own assert lines
    exit_status: int | None = None
    timed_out: bool = False  # stopped after `timeout` seconds: it neither raised nor finished


def run_apart(script: str, timeout: float = TIMEOUT_SECONDS) -> Apart:
    """Run the complete `script` with this Python in a new process, from the repository root."""
    with tempfile.TemporaryDirectory(prefix="playground-apart-") as folder:
        path, report = Path(folder) / "script.py", Path(folder) / "raised.json"
        path.write_text(script)
        try:
            done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(report)], cwd=REPO,
                                  capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except subprocess.TimeoutExpired:
            return Apart(raised=False, timed_out=True)
        raised = json.loads(report.read_text()) if report.exists() else None
    lines = done.stdout.splitlines()
    kernel = [ln.strip() for ln in lines + done.stderr.splitlines() if KERNEL_MARK in ln]
    output = "\n".join(ln for ln in lines if KERNEL_MARK not in ln).strip()
    if raised is None:
        return Apart(raised=False, output=output, kernel_lines=kernel, exit_status=done.returncode)
    frames = [traceback.FrameSummary(SCRIPT_NAME if name == str(path) else name, line, func, line=text)
              for name, line, func, text in raised["frames"]]
    return Apart(raised=True, error_type=raised["type"], error_bases=raised["bases"],
                 error_message=raised["message"], output=output, kernel_lines=kernel, frames=frames,
                 exit_status=done.returncode)
