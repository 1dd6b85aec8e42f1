"""The fact-check as Markdown, in English or Chinese: a summary table, then each claim with its evidence.

It renders `FactResult`s, which keep the claim and the evidence as words (keys and fields), so a page
can keep them as data and say them again when the visitor switches language.
"""

from __future__ import annotations

import html

from playground.core.i18n import t
from playground.lab.factcheck.claim import FactResult

MARKS = ("true", "false", "partly", "not measurable here")  # the verdicts, in the summary's order


def verdict(v: str, lang: str = "en") -> str:
    return f"**{t('fact.verdict.' + v.replace(' ', '_'), lang).upper()}**"


def _cell(s: object) -> str:
    return html.escape(str(s)).replace("|", "&#124;").replace("\n", " ")


def _text(s: str) -> str:
    return html.escape(s, quote=False)


def one(r: FactResult, lang: str = "en") -> str:
    live = t("fact.live" if r.live else "fact.not_live", lang, seconds=r.seconds)
    return "\n".join([
        f"#### {t('fact.verdict.' + r.verdict.replace(' ', '_'), lang).upper()} · `{r.id}`\n",
        f"> {_text(r.claim.text('zh'))}\n",  # the tutorial's own words, in either language
        f"{t('fact.claim_en', lang)}: {_text(r.claim.text('en'))}\n" if lang != "zh" else "",
        f"{t('fact.source', lang)}: {_text(r.source)}\n",
        f"**{t('fact.evidence', lang)}** ({live}): {_text(r.evidence.text(lang))}\n",
    ])


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
        rows.append(f"| `{r.id}`: {_cell(r.claim.text('zh'))} | {verdict(r.verdict, lang)} | "
                    f"{'✔' if r.live else '—'} |")
    return "\n".join(rows) + "\n\n" + "\n".join(one(r, lang) for r in results)
