"""Run many Python scripts, each in a process of its own, without paying the libraries' import each time.

A "zygote" Python imports what the scripts import (torch, Transformers, Accelerate, and the modules that loading
the bundled model pulls in), then forks one child per script. The child runs the file unchanged as `__main__`
(`runpy.run_path`, as `python FILE` does), from `cwd`, with its own stdout and stderr, and exits with the status
`python FILE` would have: 0, the `SystemExit` code, or 1 with the traceback printed for an uncaught exception.
Nothing has run a tensor operation in the zygote before it forks, so each child starts with PyTorch's thread pools
unstarted, as a fresh interpreter does. Importing torch and Transformers is most of a small script's time here
(about 5 s of 6), which is what this saves.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 300  # seconds a script may run

ZYGOTE = r"""
import os, runpy, signal, sys, traceback, warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import torch, transformers, accelerate
    from transformers import AutoModelForCausalLM, AutoTokenizer
    import transformers.models.gpt2.modeling_gpt2, transformers.models.gpt2.tokenization_gpt2
print("ready", flush=True)
for line in sys.stdin:
    path, out, err = line.rstrip("\n").split("\t")
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        signal.alarm(TIMEOUT)  # a script that hangs is killed by SIGALRM: its status is then -14
        sys.argv, code = [path], 0
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


class Zygote:
    """One pre-imported Python; `run(path)` runs a script in a fork of it and returns what `subprocess.run` would."""

    def __init__(self, cwd: Path, env: dict | None = None) -> None:
        code = ZYGOTE.replace("TIMEOUT", str(TIMEOUT))
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=cwd, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.folder = Path(tempfile.mkdtemp(prefix="zygote-"))
        assert self.proc.stdout.readline().strip() == "ready", "the zygote did not start"

    def run(self, path: Path) -> Finished:
        out, err = self.folder / (path.name + ".out"), self.folder / (path.name + ".err")
        self.proc.stdin.write(f"{path}\t{out}\t{err}\n")
        self.proc.stdin.flush()
        code = int(self.proc.stdout.readline())
        return Finished(code, out.read_text(errors="replace"), err.read_text(errors="replace"))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
