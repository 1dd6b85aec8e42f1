"""Capturing what the libraries do: the exception, its frames, and every warning, live.

`attempt(r, fn)` runs a broken pipeline and records on the result what the installed
PyTorch, Transformers and Accelerate raised (the type, `str(exc)` as it is, the frame
of our pipeline where it surfaced, the deepest frame) and every warning or log line
they printed on the way. `fix(r, fn)` runs the fixed pipeline for real, timed with the
device synchronised before each clock read.
"""

from __future__ import annotations

import logging
import time
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

from playground.core.paths import PACKAGE
from playground.hw import devices
from playground.lab.result import BreakResult

# Frames of PyTorch's dispatch machinery (fake tensors, dynamo, pytree): true, but they bury the model's frames.
SCRIPTS = ("<broken script>", "<fix script>")  # the file names scripts run under in-process (playground.lab.scripts)
_MACHINERY = ("torch/_subclasses/", "torch/_dynamo/", "torch/utils/_stats.py", "torch/utils/_pytree.py",
              "torch/_compile.py", "torch/_ops.py", "torch/_prims_common/wrappers.py")


@contextmanager
def capture_logs(out: list[str]):
    """Collect the warnings Transformers and Accelerate log (they use `logging`, not `warnings`)."""

    class _H(logging.Handler):
        def emit(self, record):
            out.append(record.getMessage())

    handler = _H(level=logging.WARNING)
    loggers = [logging.getLogger("transformers"), logging.getLogger("accelerate")]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeHandler(handler)


def short_path(filename: str) -> str:
    p = Path(filename)
    try:
        return "playground/" + p.resolve().relative_to(PACKAGE).as_posix()
    except (ValueError, OSError):
        pass
    s = p.as_posix()
    return s.split("site-packages/", 1)[1] if "site-packages/" in s else s


def frames(exc: BaseException) -> tuple[str | None, str | None]:
    """(the deepest frame in playground/, the deepest frame of all) of an exception's traceback."""
    return frames_of(traceback.extract_tb(exc.__traceback__))


def frames_of(tb: list[traceback.FrameSummary]) -> tuple[str | None, str | None]:
    """`frames` of a traceback's frames (an exception raised in another process: lab/apart.py)."""
    ours = [f for f in tb if short_path(f.filename).startswith(("playground/", *SCRIPTS))]
    fmt = lambda f: f"{short_path(f.filename)}:{f.lineno} in {f.name}" + (f": {f.line.strip()}" if f.line else "")
    return (fmt(ours[-1]) if ours else None), (fmt(tb[-1]) if tb else None)


def traceback_lines(exc: BaseException, keep: int = 10) -> list[str]:
    """The traceback as Python prints it (paths shortened), dispatch machinery left out, last `keep` frames."""
    return traceback_lines_of(traceback.extract_tb(exc.__traceback__), keep)


def traceback_lines_of(tb: list[traceback.FrameSummary], keep: int = 10) -> list[str]:
    """`traceback_lines` of a traceback's frames."""
    lines = []
    for f in tb:
        path = short_path(f.filename)
        if path.startswith(_MACHINERY):
            continue
        lines.append(f'  File "{path}", line {f.lineno}, in {f.name}' + (f"\n    {f.line.strip()}" if f.line else ""))
    return lines[-keep:]


def attempt(r: BreakResult, fn: Callable):
    """Run the broken pipeline; record the exception (if any) and every warning, live."""
    logs: list[str] = []
    out = None
    with warnings.catch_warnings(record=True) as caught, capture_logs(logs):
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as exc:  # the point of the lab: whatever the libraries raise
            r.raised = True
            r.error_type = type(exc).__name__
            r.error_bases = [c.__name__ for c in type(exc).__mro__[1:] if c not in (object, BaseException, Exception)]
            r.error_message = str(exc)[:4000]
            r.frame, r.raised_in = frames(exc)
            r.traceback = traceback_lines(exc)
            r.exc = exc  # kept for this run only (not in to_dict)
    for msg in [str(w.message) for w in caught] + logs:
        if msg and msg not in r.warnings:
            r.warnings.append(msg[:2000])
    return out


def fix(r: BreakResult, fn: Callable, device="cpu") -> None:
    """Run the fixed pipeline for real and time it; fn returns (ok, output text, new tokens or None)."""
    try:
        devices.sync(device)
        t0 = time.perf_counter()
        ok, output, tokens = fn()
        devices.sync(device)
        r.fix_seconds = time.perf_counter() - t0
        r.fix_ok, r.fix_output, r.fix_tokens = bool(ok), output, tokens
    except Exception as exc:  # a fix that fails is reported, not hidden
        r.fix_ok, r.fix_error = False, f"{type(exc).__name__}: {str(exc)[:1000]}"
