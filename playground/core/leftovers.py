"""Temporary folders that belong to a process, and sweeping those whose process is gone.

A folder made by `make(prefix, parent)` carries its owner in its name:
`<prefix><pid>-<start time>-<random>`. The start time is there because a pid
alone is reused: in a container the server is often pid 1 after every restart,
so a crashed server's folder would look like the new server's own. `sweep`
removes the folders whose owner (that pid *with* that start time) no longer runs,
so a server killed with SIGKILL (or by the OOM killer) in the middle of writing a
checkpoint leaves 1 GB behind only until the next start or the next build.

Folders in an older form (`<prefix><random>`, no owner in the name) cannot be
attributed; `sweep(..., unowned_after=s)` removes those untouched for `s` seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import psutil

_OWNED = re.compile(r"(\d+)-(\d+)-")


def _start_time(pid: int) -> int | None:
    """When process `pid` started (whole seconds since the epoch), or None if it does not exist."""
    try:
        return int(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:  # it exists but is someone else's: alive as far as we can tell
        return -1


def owner_tag() -> str:
    """This process as a folder name knows it: '<pid>-<start time>-'."""
    return f"{os.getpid()}-{_start_time(os.getpid())}-"


def make(prefix: str, parent: Path | str | None = None) -> Path:
    """A new private folder `<prefix><pid>-<start>-<random>` under `parent` (the system's temp folder)."""
    return Path(tempfile.mkdtemp(prefix=prefix + owner_tag(), dir=parent))


def owner(folder: Path, prefix: str) -> tuple[int, int] | None:
    """(pid, start time) from a folder's name, or None when the name does not carry them."""
    m = _OWNED.match(folder.name[len(prefix):]) if folder.name.startswith(prefix) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def alive(pid: int, start: int) -> bool:
    """Is the process that made the folder still running? The same pid started at another time is
    not it (a second of slack: the start time is computed from clock ticks)."""
    now = _start_time(pid)
    return now is not None and (now == -1 or abs(now - start) <= 1)


def mine(folder: Path, prefix: str) -> bool:
    who = owner(folder, prefix)
    return who is not None and who[0] == os.getpid() and alive(*who)


def sweep(parent: Path | str, prefix: str, unowned_after: float | None = None) -> list[Path]:
    """Remove the folders `<prefix>*` under `parent` whose process is gone (and, with
    `unowned_after`, those without an owner in their name untouched for that many seconds).
    Returns what was removed; a folder that vanishes meanwhile, or cannot be removed, is skipped."""
    parent = Path(parent)
    try:
        candidates = [p for p in parent.iterdir() if p.name.startswith(prefix) and p.is_dir()]
    except OSError:  # no such folder yet, or unreadable: nothing of ours can be in it
        return []
    removed = []
    for folder in candidates:
        who = owner(folder, prefix)
        if who is not None:
            stale = not alive(*who)
        else:
            try:
                stale = unowned_after is not None and time.time() - folder.stat().st_mtime > unowned_after
            except OSError:
                continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append(folder)
    return removed


def remove_mine(parent: Path | str, prefix: str) -> list[Path]:
    """Remove this process's own folders `<prefix>*` under `parent` (at shutdown)."""
    parent = Path(parent)
    try:
        ours = [p for p in parent.iterdir() if p.is_dir() and mine(p, prefix)]
    except OSError:
        return []
    for folder in ours:
        shutil.rmtree(folder, ignore_errors=True)
    return [p for p in ours if not p.exists()]
