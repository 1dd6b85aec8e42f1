"""The fact-check's page: verdicts, table heads, the summary."""

from playground.core.i18n.words import W

PREFIXES = ("fact",)

TEXT: dict[str, W] = {
    "fact.verdict.true": W("true", "正确"),
    "fact.verdict.false": W("false", "错误"),
    "fact.verdict.partly": W("partly true", "部分正确"),
    "fact.verdict.not_measurable_here": W("not measurable here", "这里无法测量"),
    "fact.claim": W("Claim", "说法"),
    # a claim in the picker and in the summary table: the claim in the page's language, then the id the API takes
    "fact.pick": W("{claim} ({id})", "{claim}（{id}）"),
    "fact.row": W("{claim} (`{id}`)", "{claim}（`{id}`）"),
    "fact.claim_line": W("**Claim:** {claim}", "**说法**：{claim}"),
    "fact.quote": W("The tutorial's words:", "教程原文："),
    "fact.quote_row": W("The tutorial's words, a row of its table:", "教程原文（表格中的一行）："),
    "fact.quote_code": W("The tutorial's words, a line of its code:", "教程原文（代码中的一行）："),
    "fact.source": W("Source: {source}", "出处：{source}"),
    "fact.evidence_line": W("**Evidence** ({live}): {evidence}", "**证据**（{live}）：{evidence}"),
    "fact.and": W("{a} and {b}", "{a} 和 {b}"),  # two items of a list (a longer one nests: a, (b and c))
    "fact.list": W("{a}, {b}", "{a}、{b}"),
    "fact.verdict": W("Verdict", "结论"),
    "fact.live_col": W("Run here, now", "此刻在这里运行"),
    "fact.live": W("produced live in this process, {seconds} s", "在本进程中实时得出，{seconds} 秒"),
    "fact.not_live": W("not measurable here; what a GPU would show", "这里无法测量；在 GPU 上会看到什么"),
    "fact.summary": W(
        "Claims checked: {n}, quoted from the five tutorials; {live} decided live on this machine: {false} false, "
        "{partly} partly true, {true} true, {unmeasured} not measurable here.",
        "已核查五篇教程中的 {n} 条说法，{live} 条在这台机器上实时判定：{false} 条错误，{partly} 条部分正确，"
        "{true} 条正确，{unmeasured} 条这里无法测量。",
    ),
}
