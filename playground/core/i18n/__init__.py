"""The playground's own words, in English and Chinese, side by side.

Every entry is one `W(en, zh)`: a text cannot exist in one language only. A key's
first part (its prefix: `err.`, `page.`, `progress.`) names the one area module that
holds it (each module lists its `PREFIXES`). The lab's scenarios, diagnoses and
claims keep their words next to their code and `register` them under `scenario.`,
`diagnosis.` and `claim.` keys. Errors raised by PyTorch, Transformers or Accelerate
are never stored here: the lab shows them live.

`t(key, lang, **fields)` picks a text and fills its `{fields}`; an unknown key raises
KeyError (tests/core/test_i18n.py checks every key the source names). A fact that a
report keeps to be said later is a `Said(key, fields)`: the views say it in the
page's language, the API in English.
"""

from __future__ import annotations

from typing import NamedTuple

from playground.core.i18n import (compare, devices, errors, estimate, factcheck, fit, generation, lab, ledger,
                                  lesson, models, oom, page, place, pool, progress, quant, reports, speed)
from playground.core.i18n.words import LANGS, W

__all__ = ["LANGS", "TABLE", "Said", "TranslatableStr", "W", "as_text", "bilingual", "in_lang", "register", "said", "t",
           "translatable"]


class Said(NamedTuple):
    """A sentence kept as facts: an i18n key and its fields (fields may be `Said` too)."""

    key: str
    fields: dict = {}

    def text(self, lang: str = "en") -> str:
        return t(self.key, lang, **self.fields)


def said(key: str, **fields: object) -> Said:
    return Said(key, fields)


class TranslatableStr(str):
    """A sentence where a string is expected (a progress description): its English text, remembering its key
    and fields so that the page can say it in its own language (`in_lang`). Made by `translatable(key, ...)`."""

    said: Said


def translatable(key: str, **fields: object) -> TranslatableStr:
    p = TranslatableStr(t(key, "en", **fields))
    p.said = Said(key, fields)
    return p


def in_lang(text: object, lang: str = "en") -> str:
    """`text` in `lang`: a `TranslatableStr` or a `Said` said again, any other string as it is."""
    if isinstance(text, TranslatableStr):
        return text.said.text(lang)
    if isinstance(text, Said):
        return text.text(lang)
    return str(text)


def t(key: str, lang: str = "en", **fields: object) -> str:
    """The text for `key` in `lang` ('en' or 'zh'), fields filled in (a `Said` field is said in
    `lang` too). An unknown key raises KeyError(key): a missing word is a bug, never shown as its key."""
    w = TABLE.get(key)
    if w is None:
        raise KeyError(key)
    return w.say(lang, **{k: in_lang(v, lang) if isinstance(v, (Said, TranslatableStr)) else v
                          for k, v in fields.items()})


def _merge(*areas) -> dict[str, W]:
    """The areas' tables as one; each key's prefix is one of its own area's PREFIXES, and no prefix
    belongs to two areas (so `err.` is in errors.py and nowhere else)."""
    out: dict[str, W] = {}
    owner: dict[str, str] = {}
    for area in areas:
        for prefix in area.PREFIXES:
            if prefix in owner or prefix in REGISTERED:
                raise KeyError(f"i18n prefix {prefix!r} claimed by {owner.get(prefix, 'register')} and {area.__name__}")
            owner[prefix] = area.__name__
        strays = sorted(k for k in area.TEXT if k.split(".")[0] not in area.PREFIXES)
        if strays:
            raise KeyError(f"{area.__name__} holds keys outside its PREFIXES {area.PREFIXES}: {strays}")
        out.update(area.TEXT)  # prefixes are disjoint, so keys cannot repeat across areas
    return out


# Prefixes whose words live beside their code, registered when that code is imported (`register`).
REGISTERED = ("scenario", "diagnosis", "claim")
# Every area table, once: a new area is added here (and only here).
AREAS = (page, devices, reports, generation, estimate, errors, models, progress, compare, speed, lab, factcheck,
         place, pool, ledger, fit, oom, lesson, quant)
TABLE: dict[str, W] = _merge(*AREAS)


def register(key: str, w: W) -> str:
    """Add words kept beside their code (a scenario's title, a diagnosis, a claim's evidence) to TABLE
    under `key` (its prefix one of REGISTERED); the key comes back. Registering the same words again
    (a module imported twice) is harmless; other words under a taken key raise KeyError."""
    if key.split(".")[0] not in REGISTERED:
        raise KeyError(f"{key!r}: registered keys start with one of {REGISTERED}")
    if not isinstance(w, W):
        raise TypeError(f"{key!r}: words are a W(en, zh), not {type(w).__name__}")
    if TABLE.get(key, w) != w:
        raise KeyError(f"{key!r} is registered twice with different words")
    TABLE[key] = w
    return key


def as_text(obj: object, lang: str = "en") -> object:
    """`obj` with every `Said` in it said in `lang`: what a report's `to_dict` hands the API."""
    if isinstance(obj, Said):
        return obj.text(lang)
    if isinstance(obj, dict):
        return {k: as_text(v, lang) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(as_text(v, lang) for v in obj) if not hasattr(obj, "_fields") else obj
    return obj


def bilingual(d: dict, *keys: str) -> dict:
    """`d` (a report's fields) as the API's dict: the `Said` under each of `keys` said in both languages,
    as `<key>_en` and `<key>_zh` in its place ("" for None), every other `Said` in English."""
    out: dict = {}
    for k, v in d.items():
        if k in keys:
            out[f"{k}_en"], out[f"{k}_zh"] = ("", "") if v is None else (in_lang(v, "en"), in_lang(v, "zh"))
        else:
            out[k] = as_text(v)
    return out
