"""The command line's plumbing, shared by `python -m playground` and the benches: exit codes, a parser whose
error is one line, quiet libraries, and stdout kept for the report."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings

from playground.core.errors import UserError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

class Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr, not usage plus message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see: {self.prog} --help)")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def quiet_libraries() -> None:
    """No progress bars, no advisory warnings: the output is the report."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    warnings.filterwarnings("ignore")
    try:
        # deferred (start-up): Transformers takes seconds to import, and --help answers without it.
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


@contextlib.contextmanager
def stdout_to_stderr():
    """Point fd 1 (and sys.stdout) at stderr for the duration, C-level writes included."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
