"""A fact-check's parts: the claim as the tutorial says it, the evidence a check produces, the result.

`check(claim)` runs a claim's experiment now and puts the result together; the verdict comes
from the evidence (the check computes it), never from a table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from playground.core import threads
from playground.core.i18n import Said, W, bilingual, register, said

VERDICTS = ("true", "false", "partly", "not measurable here")

# The five tutorials (in ../shared/seeds/ when this project was built), by their titles.
T1 = "T1 “model.to(DEVICE) 详解：作用、后台过程与影响”"
T2 = "T2 “模型重要方法详解：除了 generate 之外”"
T3 = "T3 “.to(device)没写对引发的'血案'与最佳实践”"
T4 = "T4 “pytorch .to(device)用法和原理”"
T5 = "T5 “pytorch一些容易错的地方”"


@dataclass
class Evidence:
    """What a check found: the verdict follows from it; the sentence saying it is its claim's `evidence`
    (the one named `sentence`, where the claim has several), filled with these fields."""

    verdict: str
    fields: dict = field(default_factory=dict)
    live: bool = True
    sentence: str = ""


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str  # i18n key (claim.<id>.claim): the claim as a sentence; zh, the tutorial's words where `quote` is ""
    source: str  # which tutorial, which section
    check: Callable[[], Evidence]
    where: str = ""  # where the playground shows it: a scenario id, or a panel
    # i18n key (claim.<id>.evidence): the evidence as a sentence with the check's {fields}; or, for a check
    # that can find things out in several ways, one key per way (claim.<id>.evidence.<name>)
    evidence: str | dict[str, str] = ""
    # the tutorial's words as printed where `claim` is not them: a row of one of its tables (its cells), or a
    # line of its code; "" where the claim's Chinese words are the tutorial's own sentence
    quote: str | tuple[str, ...] = ""


def claim(cid: str, source: str, *, says: W, evidence: W | dict[str, W], where: str = "",
          more: dict[str, W] | None = None, quote: str | tuple[str, ...] = "") -> Callable[[Callable], Claim]:
    """Decorate a claim's check: `says` is the claim as a sentence (in Chinese the tutorial's own words,
    unless they are a table's row or a line of code: then those are the `quote`, and `says` says what
    they claim), `evidence` the sentence its Evidence fills, `more` the words a field of it may be
    (`claim.<id>.<name>`); all are registered as i18n keys beside the check's code."""
    for name, w in (more or {}).items():
        register(f"claim.{cid}.{name}", w)

    sentences = (register(f"claim.{cid}.evidence", evidence) if isinstance(evidence, W) else
                 {name: register(f"claim.{cid}.evidence.{name}", w) for name, w in evidence.items()})

    def make(check: Callable[[], Evidence]) -> Claim:
        return Claim(cid, register(f"claim.{cid}.claim", says), source, check, where, sentences, quote)

    return make


@dataclass
class FactResult:
    id: str
    claim: Said
    source: str
    verdict: str
    evidence: Said  # the claim's evidence sentence with the fields the check measured
    live: bool
    fields: dict
    seconds: float
    where: str
    quote: str | tuple[str, ...] = ""  # Claim.quote

    def to_dict(self) -> dict:
        """The API's dict: the claim and the evidence in both languages (`claim_en`, `claim_zh`, ...), and
        `quote`, the tutorial's words as printed (a table row's cells joined by " | ")."""
        d = bilingual(dict(self.__dict__), "claim", "evidence")
        q = self.quote or self.claim.text("zh")
        d["quote"] = " | ".join(q) if isinstance(q, tuple) else q
        return d


def check(claim: Claim) -> FactResult:
    """Run a claim's experiment now, in a thread that ends with it (see playground.core.threads)."""
    t0 = time.perf_counter()
    ev = threads.run(claim.check, name="fact-check")
    if ev.verdict not in VERDICTS:
        raise ValueError(f"{claim.id}: verdict {ev.verdict!r}")
    sentence = claim.evidence if isinstance(claim.evidence, str) else claim.evidence[ev.sentence]
    return FactResult(claim.id, said(claim.claim), claim.source, ev.verdict, said(sentence, **ev.fields), ev.live,
                      dict(ev.fields), round(time.perf_counter() - t0, 3), claim.where, claim.quote)


def listed(items: list[str]) -> Said | str:
    """Items as one phrase, joined the way each language joins a list ("cpu and meta", "cpu 和 meta")."""
    if len(items) <= 1:
        return items[0] if items else ""
    out = said("fact.and", a=items[-2], b=items[-1])
    for item in reversed(items[:-2]):
        out = said("fact.list", a=item, b=out)
    return out
