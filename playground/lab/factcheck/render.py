"""The fact-check as Markdown, in English or Chinese: a summary table, then each claim with its evidence.

It renders `FactResult`s, which keep the claim and the evidence as words (keys and fields), so a page
can keep them as data and say them again when the visitor switches language.
"""

from __future__ import annotations

import html

from playground.core.i18n import t
from playground.core.markdown import cell, code, text
from playground.lab.factcheck.claim import FactResult

MARKS = ("true", "false", "partly", "not measurable here")  # the verdicts, in the summary's order


def verdict(v: str, lang: str = "en") -> str:
    return f"**{t('fact.verdict.' + v.replace(' ', '_'), lang).upper()}**"


def _cell(s: object) -> str:
    return cell(text(str(s)).replace("\n", " "))


def _text(s: str) -> str:
    return text(s)


def _quote(r: FactResult, lang: str) -> str:
    """The tutorial's words as printed: a row of its table as a one-row table, a line of its code as code,
    its sentence (the claim's Chinese words) as a quote."""
    if isinstance(r.quote, tuple):
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in r.quote)
        return f"{t('fact.quote_row', lang)}\n\n<table class='quote'><tr>{cells}</tr></table>\n"
    if r.quote:
        return f"{t('fact.quote_code', lang)} {code(r.quote)}\n"
    said_once = lang == "zh"  # the Chinese claim is the tutorial's sentence: said once, as the quote
    return ("" if said_once else f"{t('fact.quote', lang)}\n\n") + f"> {_text(r.claim.text('zh'))}\n"


def one(r: FactResult, lang: str = "en") -> str:
    """One claim: the verdict, the claim as a sentence in the page's language, the tutorial's own words (in
    Chinese, as printed), where they are from, and the evidence. On the Chinese page a claim that is the
    tutorial's own sentence is said once, as the quote."""
    live = t("fact.live" if r.live else "fact.not_live", lang, seconds=r.seconds)
    return "\n".join(part for part in [
        f"#### {t('fact.verdict.' + r.verdict.replace(' ', '_'), lang).upper()} · `{r.id}`\n",
        "" if lang == "zh" and not r.quote else t("fact.claim_line", lang, claim=_text(r.claim.text(lang))) + "\n",
        _quote(r, lang),
        t("fact.source", lang, source=_text(r.source)) + "\n",
        t("fact.evidence_line", lang, live=live, evidence=_text(r.evidence.text(lang))) + "\n",
    ] if part)


def many(results: list[FactResult], lang: str = "en") -> str:
    if not results:
        return ""
    counts = {v: sum(r.verdict == v for r in results) for v in MARKS}
    head = t("fact.summary", lang, n=len(results), live=sum(r.live for r in results),
             false=counts["false"], partly=counts["partly"], true=counts["true"],
             unmeasured=counts["not measurable here"])
    rows = [f"**{head}**\n", f"| {t('fact.claim', lang)} | {t('fact.verdict', lang)} | {t('fact.live_col', lang)} |",
            "|---|---|---|"]
    for r in results:
        rows.append(f"| {t('fact.row', lang, id=r.id, claim=_cell(r.claim.text(lang)))} | {verdict(r.verdict, lang)} | "
                    f"{'✔' if r.live else '—'} |")
    return "\n".join(rows) + "\n\n" + "\n".join(one(r, lang) for r in results)
