"""Will it fit, at this context? The estimate panel's context and batch, each device's need and its largest context."""

from playground.core.i18n.words import W

PREFIXES = ("fit",)

TEXT: dict[str, W] = {
    "fit.act.config": W(
        "not measured (the model is not the one loaded in this dtype): a block's largest live set per token from "
        "the config, and one position's logits",
        "未实测（不是以这个数据类型加载的模型）：按配置算出每个 token 在一个块里同时存活的最大张量，加上一个位置的 logits",
    ),
    "fit.title": W("Will it fit at {context} tokens × batch {batch}?", "{context} 个 token × 批大小 {batch} 放得下吗？"),
    "fit.heading": W("**Will it fit?** At this context and batch, on each device: **Estimate before loading** "
                     "answers.",
                     "**放得下吗？** 按下面的上下文长度和批大小，逐个设备估算：按 **加载前估算** 查看结果。"),
    "fit.context": W("context (tokens)", "上下文（token 数）"),
    "fit.batch": W("batch", "批大小"),
    "fit.col.device": W("device", "设备"),
    "fit.col.free": W("free", "空闲"),
    "fit.col.weights": W("weights", "权重"),
    "fit.col.kv": W("KV cache", "KV 缓存"),
    "fit.col.act": W("activation peak", "激活峰值"),
    "fit.col.need": W("needs", "需要"),
    "fit.col.fits": W("fits?", "放得下？"),
    "fit.col.largest": W("largest context that fits", "能放下的最长上下文"),
    "fit.yes": W("yes", "是"),
    "fit.no": W("no", "否"),
    "fit.refused": W("no: the load is refused (see above)", "否：加载会被拒绝（见上文）"),
    "fit.beyond": W("no: the model attends over {ctx} tokens at most", "否：模型最多只能关注 {ctx} 个 token"),
    "fit.need.load": W("to load it at all, at any context (the refusal above)", "无论上下文多长，光是加载就需要这么多（见上文的拒绝）"),
    "fit.largest.refused": W("none: the load is refused", "无：加载会被拒绝"),
    "fit.capped": W("{n} (the model's own limit)", "{n}（模型自己的上限）"),
    "fit.none": W("0 (not even one token)", "0（连一个 token 都放不下）"),
    "fit.kv": W("KV cache per token: {formula}", "每个 token 的 KV 缓存：{formula}"),
    "fit.sliding": W("{layers} of {of} layers slide over a window of {window} tokens: their cache stops growing there",
                     "{of} 层中有 {layers} 层使用 {window} 个 token 的滑动窗口：它们的缓存到那里就不再增长"),
    "fit.act.measured": W(
        "activation peak measured on the loaded model ({counter}) on prompts of {a} and {b} tokens: {per} per "
        "token, plus {fixed}",
        "激活峰值是在已加载的模型上用 {a} 和 {b} 个 token 的提示测得的（{counter}）：每个 token {per}，另加 {fixed}",
    ),
    "fit.act.short.measured": W("measured on this model", "在这个模型上实测"),
    "fit.act.short.config": W("from the config's arithmetic: 'Will it fit?' measures it on the loaded model",
                              "按配置算出：“放得下吗？”会在已加载的模型上实测"),
    "fit.act.formula": W("activation peak: {per} per token, plus {fixed}, {why}",
                         "激活峰值：每个 token {per}，另加 {fixed}，{why}"),
    "fit.where.cuda": W("free on the GPU (cudaMemGetInfo)", "GPU 上的空闲显存（cudaMemGetInfo）"),
    "fit.where.mps": W("MPS's recommended working set less what its driver holds",
                       "MPS 推荐的工作集减去驱动已占用的"),
}
