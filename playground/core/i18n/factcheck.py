"""The fact-check's page: verdicts, table heads, the summary."""

from playground.core.i18n.words import W

PREFIXES = ("fact",)

TEXT: dict[str, W] = {
    "fact.verdict.true": W("true", "正确"),
    "fact.verdict.false": W("false", "错误"),
    "fact.verdict.partly": W("partly true", "部分正确"),
    "fact.verdict.not_measurable_here": W("not measurable here", "这里无法测量"),
    "fact.claim": W("Claim (as the tutorial says it)", "说法（教程原文）"),
    "fact.claim_en": W("In English", "英文"),
    "fact.source": W("Source", "出处"),
    "fact.evidence": W("Evidence", "证据"),
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
