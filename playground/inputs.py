"""What a visitor may send, and the message they get when it is wrong.

Every entry point (the page, the API, the CLI) passes its arguments through these
checks before anything is loaded or allocated. A `UserError` carries a sentence
that says what was wrong and what to do; the UI shows it as `gr.Error`, the API
returns it as an error, the CLI prints it and exits non-zero. Limits can be set
by environment variables (documented in the README) so that a shared Space can be
stricter than a laptop.

A public Space is hostile ground: anything a browser can send, a script can send
too, including values the page's sliders never produce (NaN, 10**400, a list, a
megabyte of text, an unpaired UTF-16 surrogate that no tokenizer accepts). Each
check below turns such a value into a sentence, never into a traceback, and a
message that quotes what the visitor typed goes through `shown()`, so a
right-to-left override or a control character in the input cannot rearrange or
hide the rest of the message.
"""

from __future__ import annotations

import math
import os
import reprlib
import unicodedata


class UserError(ValueError):
    """A problem with what the visitor asked for, phrased for the visitor.

    Raised as `UserError.of(key, **fields)`, the sentence lives in `playground.i18n`
    under `key` in English and Chinese: `str(e)` is the English (the API and the CLI
    answer in English), `e.text("zh")` the Chinese the page shows. A plain
    `UserError(message)` (a message that embeds a library's own words) is English only.
    """

    def __init__(self, message: str = "", key: str = "", fields: dict | None = None) -> None:
        super().__init__(message)
        self.key, self.fields = key, dict(fields or {})

    @classmethod
    def of(cls, key: str, **fields: object) -> "UserError":
        from playground.i18n import t

        return cls(t(key, "en", **fields), key, fields)

    def text(self, lang: str = "en") -> str:
        if lang == "en" or not self.key:
            return str(self)
        from playground.i18n import t

        return t(self.key, lang, **self.fields)


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    """A positive whole number from the environment; the default when unset or not a number."""
    try:
        value = int(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value >= minimum else default


# 1024 locally, 256 on a Space (SPACE_ID set); PLAYGROUND_MAX_NEW_TOKENS overrides both (see playground.space).
from playground.space import space_settings  # noqa: E402  (below UserError: space imports it lazily)

MAX_NEW_TOKENS = space_settings().max_new_tokens
MAX_PROMPT_CHARS = _env_int("PLAYGROUND_MAX_PROMPT_CHARS", 20_000)
# The diagnoser reads only the two ends of a pasted text (the error is at the end), so a
# pasted log of a megabyte or two is answered; a text longer than this is refused.
MAX_DIAGNOSE_CHARS = _env_int("PLAYGROUND_MAX_DIAGNOSE_CHARS", 4_000_000)
# Events waiting in Gradio's queue (all visitors together); one more gets "queue is full"
# at once instead of waiting behind a crowd, and a flood cannot grow the server's memory.
MAX_QUEUE = _env_int("PLAYGROUND_MAX_QUEUE", 32)
# Visitor sessions whose page state Gradio keeps in memory (the least recently used beyond
# this are dropped). Gradio copies the page's configuration for every session it sees,
# about 170 KB for this page, and by default keeps 10,000 of them: 1.7 GB on a server
# that runs for weeks. The page keeps nothing in them a visitor would miss.
MAX_SESSIONS = _env_int("PLAYGROUND_MAX_SESSIONS", 200)

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


def _check_unicode(text: str, what: str) -> None:
    # JSON can carry "\ud800", an unpaired UTF-16 surrogate: a Python str holds it, but it is
    # not a character and cannot be encoded to UTF-8, which the tokenizer needs.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UserError.of("err.unicode", what=what, what_zh={"prompt": "提示词"}.get(what, "粘贴的文本"),
                           code=f"{ord(text[e.start]):04X}", at=e.start) from None


def check_prompt(prompt: object) -> str:
    if not isinstance(prompt, str):
        raise UserError.of("err.prompt_type")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise UserError.of("err.prompt_long", n=len(prompt), limit=MAX_PROMPT_CHARS)
    if not prompt.strip():
        raise UserError.of("err.prompt_empty")
    if "\x00" in prompt:
        raise UserError.of("err.prompt_nul")
    _check_unicode(prompt, "prompt")
    return prompt


def check_diagnose_text(text: object) -> str:
    """A pasted traceback or error line for the diagnoser: text, not empty, not a whole log."""
    if not isinstance(text, str):
        raise UserError.of("err.diag_type")
    if len(text) > MAX_DIAGNOSE_CHARS:
        raise UserError.of("err.diag_long", n=len(text), limit=MAX_DIAGNOSE_CHARS)
    if not text.strip():
        raise UserError.of("err.diag_empty")
    _check_unicode(text, "pasted text")
    return text


def check_max_new_tokens(value: object) -> int:
    return _whole(value, "max_new_tokens", 1, MAX_NEW_TOKENS)


def check_temperature(value: object) -> float:
    t = _number(value, "temperature")
    if not 0 <= t <= 5:
        raise UserError.of("err.temperature", got=shown(value, 40))
    return float(t)


def check_top_p(value: object) -> float:
    p = _number(value, "top_p")
    if not 0 < p <= 1:
        raise UserError.of("err.top_p", got=shown(value, 40))
    return float(p)


def check_seed(value: object) -> int:
    return _whole(value, "seed", 0, 2**63 - 1, hi_text="2^63-1")


def _whole(value: object, name: str, lo: int, hi: int, hi_text: str = "") -> int:
    n = _number(value, name)
    # compared as Python ints: JSON may carry 10**400, which float() cannot hold
    if (isinstance(n, float) and not n.is_integer()) or not lo <= int(n) <= hi:
        raise UserError.of("err.whole", name=name, lo=lo, hi=hi_text or hi, got=shown(value, 40))
    return int(n)


def _number(value: object, name: str) -> int | float:
    """An int (any size) or a finite float; bools, NaN, infinities and other types are refused."""
    if isinstance(value, bool):
        raise UserError.of("err.number", name=name, got=repr(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if text.lstrip("+-").isdigit() and len(text) <= 30 else float(text)
        except ValueError:
            raise UserError.of("err.number", name=name, got=shown(text, 40)) from None
    if isinstance(value, int):
        return value
    if not isinstance(value, float):
        raise UserError.of("err.number", name=name, got=shown(value, 40))
    if math.isnan(value) or math.isinf(value):
        raise UserError.of("err.finite", name=name, got=repr(value))
    return value
