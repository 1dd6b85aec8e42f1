"""`UserError`: a problem with what a visitor asked for, said so that they can act on it.

Raised as `UserError.of(key, **fields)`, its sentence lives in the i18n tables in
English and Chinese: `str(e)` is the English (the API and the CLI answer in
English), `e.text("zh")` the Chinese the page shows, `e.said` what a report keeps.
A plain `UserError(message)` is English only: the CLI's own refusals, which no page
reaches (tests/core/test_i18n_keys.py lists where it may be raised).

A message that quotes what the visitor typed goes through `shown()`, so a
right-to-left override or a control character in the input cannot rearrange or
hide the rest of the sentence.
"""

from __future__ import annotations

import reprlib
import unicodedata

from playground.core.i18n import Said, t


class UserError(ValueError):
    """What was wrong and what to do, in the visitor's words; never a traceback."""

    def __init__(self, message: str = "", key: str = "", fields: dict | None = None) -> None:
        super().__init__(message)
        self.key, self.fields = key, dict(fields or {})

    @classmethod
    def of(cls, key: str, **fields: object) -> "UserError":
        return cls(t(key, "en", **fields), key, fields)

    def text(self, lang: str = "en") -> str:
        if lang == "en" or not self.key:
            return str(self)
        return t(self.key, lang, **self.fields)

    @property
    def said(self) -> Said | str:
        """What a report keeps of it: its key and fields, said later in either language (the English
        of a message without a key)."""
        return Said(self.key, self.fields) if self.key else str(self)


# Unicode categories shown escaped when a message quotes the visitor: control (Cc),
# format (Cf: bidi overrides, zero-width joiners), unpaired surrogates (Cs), unassigned
# (Cn), and the line and paragraph separators (Zl, Zp).
_HIDDEN = {"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"}


def shown(value: object, limit: int = 60) -> str:
    """`value` as a message may quote it: at most `limit` characters (text in quotes), with
    invisible and direction-changing characters written as escapes (U+202E -> \\u202e)."""
    if not isinstance(value, str):
        return _escaped(reprlib.repr(value)[:limit])
    cut = len(value) > limit
    return "'" + _escaped(value[:limit]) + ("…" if cut else "") + "'"


def _escaped(text: str) -> str:
    out = []
    for ch in text:
        if unicodedata.category(ch) in _HIDDEN:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000
                       else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out)
