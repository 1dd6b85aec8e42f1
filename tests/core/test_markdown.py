"""The one Markdown-table builder: a value holding a pipe or a line break stays in its own cell and row."""

import re

import pytest

from playground.core.markdown import table


def cells(line: str) -> list[str]:
    """A GFM row's cells: split at each pipe no backslash escapes."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_header_alignment_and_rows():
    text = table(["what", "bytes"], [("weights", "20.2 MiB"), ("kv", 1024)], "lr")
    assert text.splitlines() == ["| what | bytes |", "|---|---:|", "| weights | 20.2 MiB |", "| kv | 1024 |"]
    assert table(["a", "b", "c"], [], "r").splitlines()[1] == "|---:|---|---|"  # unnamed columns: left


def test_a_pipe_or_a_line_break_in_a_value_stays_in_its_cell():
    text = table(["pair", "status"], [("cpu/float32", "error: RuntimeError: a | b\nsecond line\r\nthird"), ("x", "`a|b`")])
    lines = text.splitlines()
    assert len(lines) == 4 and all(len(cells(ln)) == 2 for ln in lines)
    assert cells(lines[2])[1] == r"error: RuntimeError: a \| b<br>second line<br>third"
    assert cells(lines[3])[1] == r"`a\|b`"  # GFM unescapes \| inside a code span too


def test_an_unknown_alignment_letter_is_refused():
    with pytest.raises(KeyError):
        table(["a"], [], "c")
