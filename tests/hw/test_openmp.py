"""torch's OpenMP workers on cores of their own: decided from facts before torch's first import, done by every entry
point, and undone for the threads present and for child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from playground.hw import openmp, zerogpu
from tests.conftest import ROOT


@pytest.mark.parametrize("platform, env, torch_imported, cores, why", [
    ("linux", {}, False, 2, "bound"),
    ("linux", {"OMP_PROC_BIND": "false"}, False, 8, "user"),
    ("linux", {"OMP_PLACES": "cores"}, False, 8, "user"),
    ("linux", {"GOMP_CPU_AFFINITY": "0-3"}, False, 8, "user"),
    ("linux", {zerogpu.ENV_FLAG: "true"}, False, 8, "zerogpu"),
    ("linux", {}, True, 8, "torch-first"),
    ("linux", {}, False, 1, "one-core"),
    ("darwin", {}, False, 8, "not-linux"),
])
def test_it_binds_only_where_it_is_first_and_nobody_chose(platform, env, torch_imported, cores, why):
    assert openmp.decide(platform, env, torch_imported, cores) == openmp.Binding(why == "bound", why)


# Run in a fresh interpreter (this one imported torch long ago): bind, then a two-thread team in a fresh thread, as
# the playground's generations run; then what each thread may run on, and what a child process inherits.
PROBE = r"""
import json, os, subprocess, sys, threading
from playground.hw import openmp
before = sorted(os.sched_getaffinity(0))
choice = openmp.bind_before_torch()
import torch
torch.set_num_threads(2)
out = dict(why=choice.why, cores=before, main=sorted(os.sched_getaffinity(0)), env=os.environ.get("OMP_PROC_BIND"))
def work():
    old = set(os.listdir("/proc/self/task"))
    torch.ones(1 << 20).add_(1)  # a parallel region: this thread's team starts
    out["master"] = sorted(os.sched_getaffinity(0))
    out["workers"] = [sorted(os.sched_getaffinity(int(t))) for t in set(os.listdir("/proc/self/task")) - old]
t = threading.Thread(target=work); t.start(); t.join()
out["child_env"] = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OMP_PROC_BIND'))"],
                                  capture_output=True, text=True).stdout.strip()
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_fresh_threads_team_gets_a_core_per_thread_and_everything_else_keeps_every_core():
    r = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k not in openmp.VARIABLES})
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["main"] == out["cores"] and out["env"] is None and out["child_env"] == "None"
    if len(out["cores"]) < 2:
        assert out["why"] == "one-core"
        return
    assert out["why"] == "bound"
    # the team's master and its worker each on one core, not the same one: unbound, the worker inherited every core
    assert len(out["master"]) == 1 and len(out["workers"]) == 1 and len(out["workers"][0]) == 1
    assert out["workers"][0] != out["master"]


# Each entry point that runs torch work binds before its first torch import; each is stopped right after by a usage
# error, and the probe then reads what the binding module recorded.
ENTRIES = {
    "app.py": "runpy.run_path('app.py', run_name='imported')",
    "python -m playground": "sys.argv = ['playground', 'bench', 'parity', '--runs', '0']; "
                            "runpy.run_module('playground', run_name='__main__')",
    "python -m playground.bench": "sys.argv = ['bench', '--runs', '0']; "
                                  "runpy.run_module('playground.bench', run_name='__main__')",
}


@pytest.mark.slow
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_every_entry_point_binds_before_torch(entry):
    code = ("import runpy, sys\ntry:\n    " + ENTRIES[entry] + "\nexcept SystemExit:\n    pass\n"
            "from playground.hw import openmp\nprint(openmp.BOUND and openmp.BOUND.why)")
    env = {k: v for k, v in os.environ.items() if k not in openmp.VARIABLES}
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    expected = openmp.decide(sys.platform, env, False, len(os.sched_getaffinity(0))).why
    assert r.stdout.strip().splitlines()[-1:] == [expected], r.stderr[-2000:]
