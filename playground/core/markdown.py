"""Markdown tables for the views: every table the page shows is built here, its cells escaped.

A GitHub-flavoured table row is split at every `|` that no backslash escapes, and ends at a line
break: a measured value, an error message or a module name holding either would end its cell or
its row early and shift the columns after it. `table` escapes both (`\\|`, which GFM unescapes
inside code spans too, and `<br>`); the cells' other Markdown and HTML are the caller's.
"""

from __future__ import annotations

from typing import Iterable, Sequence

_ALIGN = {"l": "---", "r": "---:"}


def cell(value: object) -> str:
    """One cell's text: `str(value)` with its pipes escaped and its line breaks as `<br>`."""
    return str(value).replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")


def table(head: Sequence[object], rows: Iterable[Sequence[object]], align: str = "") -> str:
    """A table: the header cells, the body's rows, and one letter a column, 'l' (left, the default
    for columns `align` leaves out) or 'r' (right: numbers)."""
    lines = ["| " + " | ".join(cell(h) for h in head) + " |",
             "|" + "|".join(_ALIGN[a] for a in align.ljust(len(head), "l")) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
