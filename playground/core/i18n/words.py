"""One text in both languages: the unit every table of words is made of."""

from __future__ import annotations

from typing import NamedTuple

LANGS = ("en", "zh")


class W(NamedTuple):
    """A text in English and in Chinese, side by side, so that neither can be missing."""

    en: str
    zh: str

    def say(self, lang: str = "en", **fields: object) -> str:
        text = self.zh if lang == "zh" else self.en
        return text.format(**fields) if fields else text
