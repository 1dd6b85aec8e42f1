"""A generation's statistics, why it finished, and the engines' names."""

from playground.core.i18n.words import W

PREFIXES = ("stats", "finish", "engine")

TEXT: dict[str, W] = {
    "stats.running": W("generating…", "生成中…"),
    "stats.left": W("{n} of {max} tokens; about {left} more at this rate, if it runs to {max}",
                    "已生成 {n}/{max} 个 token；按现在的速度，生成满 {max} 个还要约 {left}"),
    "stats.done": W("done ({reason})", "完成（{reason}）"),
    "stats.busy": W("measured while the machine was busy (load average {load:.1f} on {cores} cores): other work "
                    "shared the CPU, so the rates are lower than this machine gives",
                    "测量时机器正忙（{cores} 个核心上的负载均值为 {load:.1f}）：其他任务在分用 CPU，"
                    "所以这些速度低于这台机器本来的水平"),
    "stats.mode": W("mode", "模式"),
    "stats.threads": W(" · torch threads: {n} of {cores} cores", " · torch 线程数：{n}，共 {cores} 个核"),
    "stats.model": W(" · model: `{model}` ({device}, {dtype})", " · 模型：`{model}`（{device}，{dtype}）"),
    "stats.greedy": W("greedy", "贪心解码"),
    "stats.sampling": W("sampling", "采样"),
    "stats.ttft": W("time to first token", "首个 token 耗时"),
    "stats.prompt": W("prompt tokens", "提示词 token 数"),
    "stats.new": W("new tokens", "新生成 token 数"),
    "stats.rate": W("decode rate", "解码速度"),
    "stats.total": W("total", "总耗时"),
    "stats.rate_cell": W("{rate} ({n} {n?token|tokens} in {t})", "{rate}（{t} 内生成 {n} 个 token）"),
    "stats.per_token": W("per-token decode times", "逐 token 解码耗时"),
    "stats.chat_applied": W("chat template applied: the prompt went in as the user's message",
                            "已套用聊天模板：提示词作为用户消息送入"),
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
    "stats.steps": W("{n} {n?step|steps}", "{n} 步"),
    # the engines and the decoding mode
    "engine.generate": W("generate()", "generate()（库自带）"),
    "engine.manual": W("manual loop + KV cache", "手写循环 + KV 缓存"),
    "engine.manual-nocache": W("manual loop, no cache", "手写循环，不用缓存"),
    "engine.compiled": W("static cache + torch.compile", "静态缓存 + torch.compile"),
}
