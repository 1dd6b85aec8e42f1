"""Markdown for the views: every table the page shows is built here, its cells escaped; and text from
outside (a library's words, a tensor's name) put into Markdown so that it shows as written.

A GitHub-flavoured table row is split at every `|` that no backslash escapes, and ends at a line
break: a measured value, an error message or a module name holding either would end its cell or
its row early and shift the columns after it. `table` escapes both (`\\|`, which GFM unescapes
inside code spans too, and `<br>`); the cells' other Markdown and HTML are the caller's.

Inside a code span Markdown shows every character as typed, so an HTML entity there is shown as
its letters (`&lt;`, `&#x27;`): `text` escapes HTML outside code spans only, and `code` makes a
code span of any string without escaping it.
"""

from __future__ import annotations

import html
import re
from typing import Iterable, Sequence

from playground.core.i18n import t

_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)  # a code span: a run of backticks, text, the same run

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


def text(s: str) -> str:
    """`s` for Markdown: `&`, `<` and `>` escaped outside its code spans (where HTML would act), left
    as they are inside them (where Markdown already shows them as written)."""
    out, at = [], 0
    for m in _SPAN.finditer(s):
        out += [html.escape(s[at:m.start()], quote=False), m.group(0)]
        at = m.end()
    return "".join(out + [html.escape(s[at:], quote=False)])


def code(s: str) -> str:
    """`s` as one inline code span, shown exactly as written: fenced by one more backtick than the
    longest run of them inside it (padded with spaces where it begins or ends with one)."""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


# ---------------------------------------------------------------- punctuation in the page's language

def labelled(label: str, text: str, lang: str = "en", plain: bool = False) -> str:
    """A label (bold unless `plain`) and what it labels, with the language's colon: `**RAM:** 3 GB`,
    `**内存**：3 GB` (the bold closed before the full-width colon: CommonMark does not close `**` between a
    full-width colon and a CJK letter)."""
    return t("punct.labelled_plain" if plain else "punct.labelled", lang, label=label, text=text)


def aside(text: str, note: str, lang: str = "en") -> str:
    """`text (note)`, with the language's parentheses."""
    return t("punct.aside", lang, text=text, aside=note)


def sentence(text: str, lang: str = "en") -> str:
    """`text` ended with the language's full stop, unless it already ends with a stop of either."""
    return text if text.rstrip().endswith((".", "。", "!", "！", "?", "？")) else t("punct.end", lang, text=text)
