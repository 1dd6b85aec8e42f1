"""Temporary folders carry their owner; those whose process is gone are swept, the living ones kept."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from playground.core import leftovers

PREFIX = ".tmp-"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_folder_names_its_process_and_start_time(tmp_path):
    d = leftovers.make(PREFIX, tmp_path)
    pid, start = leftovers.owner(d, PREFIX)
    assert pid == os.getpid() and abs(start - psutil.Process().create_time()) <= 1
    assert leftovers.mine(d, PREFIX) and leftovers.alive(pid, start)
    assert leftovers.owner(tmp_path / "unrelated", PREFIX) is None


def test_sweep_removes_only_the_folders_of_processes_that_are_gone(tmp_path):
    ours = leftovers.make(PREFIX, tmp_path)
    (ours / "weights").write_bytes(b"x" * 100)
    dead = tmp_path / f"{PREFIX}{_dead_pid()}-{int(time.time())}-abc"
    # the same pid as a living process, started at another time: a reused pid, not its owner (pid 1 in a container)
    reused = tmp_path / f"{PREFIX}{os.getpid()}-{int(psutil.Process().create_time()) - 3600}-abc"
    other = tmp_path / "gpt2-small"  # a finished checkpoint: not a temporary folder
    for d in (dead, reused, other):
        d.mkdir()
        (d / "model.safetensors").write_bytes(b"x" * 100)
    removed = leftovers.sweep(tmp_path, PREFIX)
    assert sorted(removed) == sorted([dead, reused])
    assert ours.exists() and other.exists() and not dead.exists() and not reused.exists()


def test_folders_without_an_owner_are_swept_only_when_old(tmp_path):
    old, new = tmp_path / f"{PREFIX}k2j4h5", tmp_path / f"{PREFIX}q9w8e7"
    old.mkdir()
    new.mkdir()
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert leftovers.sweep(tmp_path, PREFIX) == []  # no age given: unowned folders are left alone
    assert leftovers.sweep(tmp_path, PREFIX, unowned_after=3600) == [old]
    assert new.exists()


def test_remove_mine_removes_this_process_folders_only(tmp_path):
    ours = leftovers.make(PREFIX, tmp_path)
    theirs = tmp_path / f"{PREFIX}1-{int(psutil.Process(1).create_time())}-abc"
    theirs.mkdir()
    assert leftovers.remove_mine(tmp_path, PREFIX) == [ours]
    assert theirs.exists() and not ours.exists()


def test_sweeping_a_folder_that_does_not_exist_finds_nothing(tmp_path):
    assert leftovers.sweep(tmp_path / "nope", PREFIX) == []
