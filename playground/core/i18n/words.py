"""One text in both languages: the unit every table of words is made of."""

from __future__ import annotations

import re
from typing import NamedTuple

LANGS = ("en", "zh")
# "{n} {n?block|blocks}": the word for one, or for any other count, of the field named before "?" (English
# counts its nouns; Chinese has no plural, so its texts need none). Chosen before the fields are filled in.
PLURAL = re.compile(r"\{(\w+)\?([^|{}]*)\|([^{}]*)\}")


def _counted(text: str, fields: dict) -> str:
    return PLURAL.sub(lambda m: m.group(2) if fields[m.group(1)] == 1 else m.group(3), text)


class W(NamedTuple):
    """A text in English and in Chinese, side by side, so that neither can be missing."""

    en: str
    zh: str

    def say(self, lang: str = "en", **fields: object) -> str:
        text = self.zh if lang == "zh" else self.en
        return _counted(text, fields).format(**fields) if fields else text
