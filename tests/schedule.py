"""The order the suite's files start in under `-n 2 --dist loadfile` (the README's command): the folders whose files
run longest first (servers, browsers, subprocesses), each file's tests in their order, so that the two workers share
the long files from the start and the short ones fill in at the end, instead of one worker finishing a long file
alone.

Plain pytest and xdist only (no torch): tests/test_schedule.py runs it in a pytest of its own in about a second.
"""

from __future__ import annotations

from pathlib import Path

# the test folders in the order they start, the longest-running first; the top-level files (tests/*.py) last
FIRST = {name: rank for rank, name in enumerate(("e2e", "tools", "lab", "run", "web", "load", "hw", "core"))}


def keep_our_order(config) -> None:
    """pytest-xdist 3.x hands a `--dist loadfile` run's files out in order of their number of tests, most first,
    unless told not to: the suite's few-test, long-running files (a server, a browser) went last, and one worker
    ran them alone at the end (measured here: 38 to 93 s of one worker's time, four runs)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def sort_items(items: list) -> None:
    """The collected tests, the longest-running folders first (a stable sort: each folder's files keep their order)."""
    items.sort(key=lambda item: FIRST.get(Path(str(item.path)).parent.name, len(FIRST)))
