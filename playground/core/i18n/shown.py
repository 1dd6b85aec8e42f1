"""What the views show around the numbers: table heads, phase names, chart titles, Compare, the devices."""

from playground.core.i18n.words import W

TEXT: dict[str, W] = {
    # the phases of a load and a generation, as the tables and the timeline's legend name them
    "phase.name.download": W("download", "下载"),
    "phase.name.estimate": W("estimate", "估算"),
    "phase.name.import": W("import", "导入"),
    "phase.name.load": W("load", "加载"),
    "phase.name.migrate": W("migrate", "迁移"),
    "phase.name.eval": W("eval", "eval（推理模式）"),
    "phase.name.build": W("build", "构建"),
    "phase.name.warm-up": W("warm-up", "预热"),
    "phase.name.prefill": W("prefill", "预填充"),
    "phase.name.decode": W("decode", "解码"),
    "phase.name.": W("(before the first phase)", "（第一个阶段之前）"),
    "ui.fake_device": W("{device} (fake)", "{device}（模拟）"),  # a tensor of the lab's FakeTensorMode
    # the devices table
    "dev.col.device": W("device", "设备"),
    "dev.col.state": W("state", "状态"),
    "dev.col.native": W("native", "原生支持"),
    "dev.col.note": W("what it is, and why", "是什么，以及原因"),
    "dev.available": W("✅ available", "✅ 可用"),
    "dev.unavailable": W("⛔ unavailable", "⛔ 不可用"),
    # the load report
    "report.in_dtype": W("in {dtype}", "（{dtype}）"),
    "report.vram_cell": W("cuda:{index}: allocated {alloc}, reserved {reserved}",
                          "cuda:{index}：已分配 {alloc}，已保留 {reserved}"),
    "report.mmap_label": W("still mapped from the file", "仍映射自文件"),
    "report.vram_label": W("VRAM", "显存"),
    "report.chat": W("chat template", "聊天模板"),
    "report.chat_yes": W("the tokenizer has one: generation applies it by default (the switch under the prompt)",
                         "分词器带有聊天模板：生成时默认套用（开关在提示词下方）"),
    # the timeline
    "timeline.x": W("seconds", "秒"),
    "timeline.y": W("process RSS (MiB)", "进程 RSS（MiB）"),
    "timeline.color": W("phase", "阶段"),
    "timeline.samples": W("{time} ({n} samples)", "{time}（{n} 个采样）"),
    # generation stats
    "finish.running": W("running", "进行中"),
    "finish.length": W("max_new_tokens reached", "达到 max_new_tokens"),
    "finish.eos": W("end-of-text token", "遇到结束 token"),
    "finish.stopped": W("stopped", "已停止"),
    "stats.prefill": W("prefill", "预填充"),
    "stats.mean": W("mean", "平均"),
    "stats.median": W("median", "中位数"),
    "stats.min": W("min", "最小"),
    "stats.max": W("max", "最大"),
    "stats.p90": W("p90", "p90"),
    "stats.first": W("first", "第一步"),
    "stats.last": W("last", "最后一步"),
    "stats.steps": W("{n} steps", "{n} 步"),
    "stats.engine": W("engine", "引擎"),
    # the engines and the decoding mode
    "engine.generate": W("generate()", "generate()（库自带）"),
    "engine.manual": W("manual loop + KV cache", "手写循环 + KV 缓存"),
    "engine.manual-nocache": W("manual loop, no cache", "手写循环，不用缓存"),
    "engine.compiled": W("static cache + torch.compile", "静态缓存 + torch.compile"),
    "page.decoding": W("Decoding", "解码方式"),
    "page.decoding.sampled": W("sampled (temperature 0.8, top_p 0.95, seed 0)",
                               "采样（temperature 0.8，top_p 0.95，随机种子 0）"),
    "page.decoding.greedy": W("greedy (temperature 0)", "贪心（temperature 0）"),
    "page.decoding.custom": W("your own settings", "自定义设置"),
    "page.snippet.none": W("# The code to copy appears here after a generation, for the engine that ran it.",
                           "# 生成之后，这里会出现可复制的代码（对应所用的生成引擎）。"),
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
    "cmp.col.weights": W("weights", "权重"),
    "cmp.runs_cell": W("{warmup} warm-up + {runs} timed", "{warmup} 次预热 + {runs} 次计时"),
    "cmp.tokens_cell": W("{n} tokens", "{n} 个 token"),
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
    "cmp.returned": W(
        "Your model is loaded again: `{model}` on `{device}` in `{dtype}`, in {seconds} (load {load}, migrate "
        "{migrate}).",
        "你的模型已重新加载：`{model}`，设备 `{device}`，数据类型 `{dtype}`，用时 {seconds}"
        "（加载 {load}，迁移 {migrate}）。",
    ),
    "cmp.return_failed": W("Your model could not be loaded again: {error}", "你的模型没能重新加载：{error}"),
    "cmp.nothing_to_return": W("No model was loaded before the run: nothing to load back.",
                               "运行之前没有加载模型：不需要重新加载。"),
    "cmp.chart.load": W("load (s)", "加载（秒）"),
    "cmp.chart.migrate": W("migrate (s)", "迁移（秒）"),
    "cmp.chart.ttft": W("time to first token (s)", "首个 token 耗时（秒）"),
    "cmp.chart.rate": W("decode (tokens/s)", "解码速度（tokens/s）"),
    "cmp.chart.rss": W("peak RSS (MiB)", "RSS 峰值（MiB）"),
    "cmp.chart.x": W("device / dtype", "设备 / 数据类型"),
    "progress.cmp_pair": W("{i}/{n} {pair}: {step}", "第 {i}/{n} 个组合 {pair}：{step}"),
    "progress.cmp_warmup": W("warm-up (untimed): decode {done}/{n} tokens", "预热（不计时）：解码 {done}/{n} 个 token"),
    "progress.cmp_run": W("run {k} of {runs}: decode {done}/{n} tokens", "第 {k}/{runs} 次：解码 {done}/{n} 个 token"),
    "progress.cmp_done": W("{n} pairs done", "{n} 个组合已完成"),
    "progress.cmp_return": W("loading your model back: {step}", "正在重新加载你的模型：{step}"),
    "status.away": W(
        "**Loaded:** nothing while Compare runs; `{model}` on `{device}` in `{dtype}` is loaded back afterwards.",
        "**已加载：**对比运行期间没有模型；`{model}`（`{device}`，`{dtype}`）会在结束后重新加载。",
    ),
}
