"""The playground's own words, in English and Chinese, side by side.

Every entry is one `W(en, zh)`: a text cannot exist in one language only. The
tables are split by area (the page, reports, errors, the lab); the lab's
scenarios and diagnoses carry their own words next to their code. Errors raised
by PyTorch, Transformers or Accelerate are never stored here: the lab shows them
live.

`t(key, lang, **fields)` picks a text and fills its `{fields}`. A fact that a
report keeps to be said later is a `Said(key, fields)`: the views say it in the
page's language, the API in English.
"""

from __future__ import annotations

from typing import NamedTuple

from playground.core.i18n import errors, faults, lab, lesson, page, realmodel, reports, shown, speed
from playground.core.i18n.words import LANGS, W

__all__ = ["LANGS", "TABLE", "Phrase", "Said", "W", "in_lang", "phrase", "plain", "said", "t"]


class Said(NamedTuple):
    """A sentence kept as facts: an i18n key and its fields (fields may be `Said` too)."""

    key: str
    fields: dict = {}

    def text(self, lang: str = "en") -> str:
        return t(self.key, lang, **self.fields)


def said(key: str, **fields: object) -> Said:
    return Said(key, fields)


class Phrase(str):
    """A sentence where a plain string is expected (a progress description): its English text,
    remembering its key and fields so that the page can say it in its own language (`in_lang`)."""

    said: Said


def phrase(key: str, **fields: object) -> Phrase:
    p = Phrase(t(key, "en", **fields))
    p.said = Said(key, fields)
    return p


def in_lang(text: object, lang: str = "en") -> str:
    """`text` in `lang`: a `Phrase` or a `Said` said again, any other string as it is."""
    if isinstance(text, Phrase):
        return text.said.text(lang)
    if isinstance(text, Said):
        return text.text(lang)
    return str(text)


def t(key: str, lang: str = "en", **fields: object) -> str:
    """The text for `key` in `lang` ('en' or 'zh'), fields filled in (a `Said` field is said in
    `lang` too); an unknown key comes back as itself."""
    w = TABLE.get(key)
    if w is None:
        return key
    return w.say(lang, **{k: in_lang(v, lang) if isinstance(v, (Said, Phrase)) else v for k, v in fields.items()})


def _merge(*areas: dict[str, W]) -> dict[str, W]:
    out: dict[str, W] = {}
    for area in areas:
        twice = set(out) & set(area)
        if twice:
            raise KeyError(f"i18n keys defined in two areas: {sorted(twice)}")
        out.update(area)
    return out


# Every area table, once: a new area is added here (and only here).
AREAS = (page, reports, errors, lab, faults, lesson, realmodel, shown, speed)
TABLE: dict[str, W] = _merge(*(area.TEXT for area in AREAS))


def plain(obj: object, lang: str = "en") -> object:
    """`obj` with every `Said` in it said in `lang`: what a report's `to_dict` hands the API."""
    if isinstance(obj, Said):
        return obj.text(lang)
    if isinstance(obj, dict):
        return {k: plain(v, lang) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(plain(v, lang) for v in obj) if not hasattr(obj, "_fields") else obj
    return obj
