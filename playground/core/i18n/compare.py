"""Compare: the table's heads and cells, the statuses, the charts, the model loaded back."""

from playground.core.i18n.words import W

PREFIXES = ("cmp",)

TEXT: dict[str, W] = {
    # Compare
    "cmp.col.pair": W("pair", "组合"),
    "cmp.col.status": W("status", "状态"),
    "cmp.col.load": W("load", "加载"),
    "cmp.col.migrate": W("migrate", "迁移"),
    "cmp.col.ttft": W("time to first token (median, min–max)", "首个 token 耗时（中位数，最小–最大）"),
    "cmp.col.rate": W("decode tokens/s (median, min–max)", "解码速度 tokens/s（中位数，最小–最大）"),
    "cmp.col.runs": W("runs", "次数"),
    "cmp.col.bound": W("what limits decode", "解码受什么限制"),
    "cmp.col.rss": W("peak RSS", "RSS 峰值"),
    "cmp.col.weights": W("memory: weights, KV cache (vs estimate)", "内存：权重、KV 缓存（与估算相比）"),
    "cmp.vs_estimate": W("({pct:+.2f}% vs estimate)", "（与估算相差 {pct:+.2f}%）"),
    "cmp.kv_cell": W("KV cache {kv}", "KV 缓存 {kv}"),
    "cmp.runs_cell": W("{warmup} warm-up + {runs} timed", "{warmup} 次预热 + {runs} 次计时"),
    "cmp.tokens_cell": W("{n} {n?token|tokens}", "{n} 个 token"),
    "cmp.status.ok": W("ok", "完成"),
    "cmp.status.error": W("error", "出错"),
    "cmp.status.refused": W("refused", "被拒绝"),
    "cmp.status.stopped": W("stopped", "已停止"),
    "cmp.status.skipped": W("skipped", "已跳过"),
    "cmp.status.pending": W("pending", "等待中"),
    "cmp.skipped": W("stopped before this pair", "在这个组合之前已停止"),
    "cmp.bound.memory": W("memory bandwidth: {pct:.0f}% of the bound ({bound:,.0f} tokens/s)",
                          "内存带宽：达到上限的 {pct:.0f}%（上限 {bound:,.0f} tokens/s）"),
    "cmp.bound.overhead": W("per-token overhead: the weights take {read} of each {step} step ({pct:.0f}%)",
                            "每个 token 的固定开销：读取权重只占每步 {step} 中的 {read}（{pct:.0f}%）"),
    "cmp.bound.explain": W(
        "**What limits decode.** Each decode step reads every weight once, so memory bandwidth ÷ weight bytes "
        "is the most tokens/s a run could reach (bandwidth measured here: a streaming read of 512 MiB, as decode only reads the weights). A row at "
        "{limit:.0f}% of that bound or more is **memory-bound**: a faster memory, or fewer bytes per weight, "
        "makes it faster. Below it, most of each step is **per-token overhead** (Python, the framework's "
        "dispatch, kernel launches), which does not shrink with the weights: a small model like the bundled one "
        "reads its weights in a fraction of a millisecond and spends the rest of the step elsewhere, so the "
        "bandwidth bound says little about its speed: the overhead, and how fast this processor computes in "
        "each dtype, decide it.",
        "**解码受什么限制。** 每一步解码都要把所有权重读一遍，所以内存带宽 ÷ 权重字节数 "
        "就是一次运行最多能达到的 tokens/s（带宽在这里实测：流式读取 512 MiB，因为解码只读权重）。达到这个上限 "
        "{limit:.0f}% 或以上的行是**受内存带宽限制**：更快的内存、或每个权重更少的字节，会让它更快。"
        "低于它的行，每一步的大部分时间是**每个 token 的固定开销**（Python、框架的调度、kernel 启动），"
        "它不随权重变小而减少：像内置模型这样的小模型，读一遍权重只要零点几毫秒，每一步的其余时间都花在别处，"
        "所以带宽上限说明不了它的速度：决定速度的是这些开销，以及这颗处理器用各种数据类型计算有多快。",
    ),
    "cmp.repeat": W(
        "Each pair: one load, **{warmup}** untimed warm-up generation, then **{runs}** timed ones of the same "
        "greedy tokens; the table gives the median and the spread (min–max) of the timed runs.",
        "每个组合：加载一次，先做 **{warmup}** 次不计时的预热生成，再做 **{runs}** 次计时生成（同样的贪心 token）；"
        "表格给出计时运行的中位数和范围（最小–最大）。",
    ),
    "cmp.rank.apart": W(
        "**{a}** decodes faster than **{b}**: every timed run of one beat every run of the other "
        "({a_lo}–{a_hi} against {b_lo}–{b_hi} tokens/s).",
        "**{a}** 解码比 **{b}** 快：前者每一次计时运行都快于后者的每一次（{a_lo}–{a_hi} 对 {b_lo}–{b_hi} tokens/s）。",
    ),
    "cmp.rank.overlap": W(
        "**{a}** and **{b}**: their spreads overlap ({a_lo}–{a_hi} and {b_lo}–{b_hi} tokens/s), so this run "
        "cannot tell which decodes faster; more tokens per run, or running it again, may.",
        "**{a}** 和 **{b}**：两者的范围有重叠（{a_lo}–{a_hi} 与 {b_lo}–{b_hi} tokens/s），"
        "所以这次运行分不出哪个解码更快；每次生成更多 token，或再运行一次，也许可以。",
    ),
    "cmp.busy": W("**{pair}**: {said}", "**{pair}**：{said}"),
    "cmp.chart.load": W("load (ms)", "加载（毫秒）"),
    "cmp.chart.migrate": W("migrate (ms)", "迁移（毫秒）"),
    "cmp.chart.ttft": W("time to first token (ms)", "首个 token 耗时（毫秒）"),
    "cmp.chart.spread": W("bar: median; line: runs' min–max", "柱：中位数；线：各次最低–最高"),
    "cmp.chart.rate": W("decode (tokens/s)", "解码速度（tokens/s）"),
    "cmp.chart.rss": W("peak RSS (MiB)", "RSS 峰值（MiB）"),
    "cmp.chart.x": W("device / dtype", "设备 / 数据类型"),
    # what each dtype changed against the reference row (web/compare_views.py: dtype_table)
    "cmp.dtype.title": W("What the dtype changed, against {ref} on the same prompt", "数据类型改变了什么：与同一提示词下的 {ref} 相比"),
    "cmp.dtype.col.pair": W("pair", "组合"),
    "cmp.dtype.col.weights": W("weights", "权重"),
    "cmp.dtype.col.prefill": W("prefill", "预填充"),
    "cmp.dtype.col.decode": W("decode", "解码"),
    "cmp.dtype.col.same": W("next tokens as the reference's", "与参照相同的下一个 token"),
    "cmp.dtype.col.logits": W("largest logit difference per position", "每个位置最大的对数几率（logits）差"),
    "cmp.dtype.col.ops": W("top operators per decode step", "每个解码步耗时最多的算子"),
    "cmp.dtype.same_cell": W("{same} of {n}", "{n} 个中 {same} 个"),
    "cmp.dtype.first_change": W("first different at token {at}", "第 {at} 个 token 起出现不同"),
    "cmp.dtype.prefill_cell": W("{rate:.0f} tokens/s ({n} prompt tokens ÷ TTFT)", "{rate:.0f} tokens/s（{n} 个提示词 token ÷ 首 token 时间）"),
    "cmp.dtype.decode_cell": W("{rate:.1f} tokens/s ({n} tokens)", "{rate:.1f} tokens/s（{n} 个 token）"),
    "cmp.dtype.logit_cell": W("median {median:.3g}, max {max:.3g}", "中位数 {median:.3g}，最大 {max:.3g}"),
    "cmp.dtype.ops_total": W("a step: {ms:.1f} ms ({n} steps profiled)", "每步 {ms:.1f} ms（剖析了 {n} 步）"),
    "cmp.dtype.says": W(
        "**{pair}** holds {share:.2f}× the weights of **{ref}** ({weights} against {ref_weights}), {speed}, and chose "
        "{ref}'s next token at {same} of {n} positions.",
        "**{pair}** 的权重是 **{ref}** 的 {share:.2f} 倍（{weights} 对 {ref_weights}），{speed}，"
        "在 {n} 个位置中有 {same} 个选了和 {ref} 相同的下一个 token。",
    ),
    "cmp.dtype.speed.faster": W("decodes faster ({rate:.1f} against {ref_rate:.1f} tokens/s, every run)",
                                "解码更快（{rate:.1f} 对 {ref_rate:.1f} tokens/s，每次运行都如此）"),
    "cmp.dtype.speed.slower": W("decodes slower ({rate:.1f} against {ref_rate:.1f} tokens/s, every run)",
                                "解码更慢（{rate:.1f} 对 {ref_rate:.1f} tokens/s，每次运行都如此）"),
    "cmp.dtype.speed.unclear": W("decodes at {rate:.1f} against {ref_rate:.1f} tokens/s, runs too close to tell which is faster",
                                 "解码 {rate:.1f} 对 {ref_rate:.1f} tokens/s，各次运行太接近，分不出谁更快"),
    "cmp.dtype.why_slower": W(
        "Why slower: of its {step:.1f} ms per step, {conv:.1f} ms go to operators that convert stored values to "
        "another dtype (`aten::copy_`, `aten::to`, torchao's dequantize), against {ref_conv:.1f} ms in {ref}: the small "
        "integers are turned back into floats at every step before the multiply.",
        "为什么更慢：每步 {step:.1f} ms 中有 {conv:.1f} ms 花在把存储的值转换成另一种数据类型的算子上"
        "（`aten::copy_`、`aten::to`、torchao 的反量化），而 {ref} 只花 {ref_conv:.1f} ms："
        "每一步相乘之前都要把小整数变回浮点数。",
    ),
    "cmp.dtype.then": W("{a} {b}", "{a}{b}"),
    "cmp.dtype.how": W(
        "Measured after the timed runs: the reference's greedy tokens fed to each model in one forward pass "
        "(teacher-forced, so a changed choice does not change every later position), and a few decode steps under "
        "torch.profiler (self time per operator).",
        "在计时运行之后测量：把参照的贪心 token 一次前向传播喂给每个模型（教师强制：每个位置都喂参照的 token，"
        "一个位置选得不同不会改变后面所有位置），再在 torch.profiler 下跑几个解码步（每个算子的自身耗时）。",
    ),
}
