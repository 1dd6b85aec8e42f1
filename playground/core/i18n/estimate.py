"""The memory estimate and the guard's refusal: what it needs, where the numbers come from."""

from playground.core.i18n.words import W

PREFIXES = ("est", "estimate")

TEXT: dict[str, W] = {
    "estimate.fits": W("Fits", "放得下"),
    "estimate.refused": W("Would be refused", "会被拒绝"),
    "estimate.stale": W(
        "Not the selection now: this estimate is for `{model}` on `{device}` in `{dtype}` at {context} tokens × "
        "batch {batch}. Press **Estimate before loading** for what is selected.",
        "这不是当前的选择：下面的估算针对的是 `{model}`，设备 `{device}`，数据类型 `{dtype}`，{context} 个 token × "
        "批大小 {batch}。要估算当前选择，请按 **加载前估算**。"),
    "estimate.what": W("what", "项目"),
    "estimate.required": W("needed, with the margin", "所需（含余量）"),
    "estimate.build": W("first use: the float32 build in RAM, with the margin", "首次使用：在内存中构建 float32，含余量"),
    "estimate.available": W("available", "可用"),
    "estimate.largest": W("largest layer", "最大的层"),
    "estimate.more": W(" and {n} more of its size", " 等，另有 {n} 个同样大小"),
    "estimate.kv": W("KV cache per token", "每个 token 的 KV 缓存"),
    "estimate.by_dtype": W("weights by dtype", "各数据类型的权重大小"),
    # the estimate's reasoning
    "est.dtype.asked": W("asked for {dtype}", "要求 {dtype}"),
    "est.dtype.config": W("auto: config.json says dtype={dtype}", "auto：config.json 写明 dtype={dtype}"),
    "est.dtype.stored": W("auto: config.json names no dtype; the checkpoint stores {dtype}",
                          "auto：config.json 没写数据类型；检查点里存的是 {dtype}"),
    "est.dtype.default": W("auto: neither config nor checkpoint says; PyTorch's default {dtype}",
                           "auto：配置和检查点都没写；用 PyTorch 的默认值 {dtype}"),
    "est.kv_formula": W(
        "2 x {layers} layers x {kv_heads} kv heads x {head_dim} head dim x {bytes} bytes = {total} bytes per token",
        "2 × {layers} 层 × {kv_heads} 个 KV 头 × {head_dim} 头维度 × {bytes} 字节 = 每个 token {total} 字节",
    ),
    "est.where.system": W("available system RAM (psutil)", "系统可用内存（psutil）"),
    "est.where.budget": W(
        "{env}={value} (caps the {system} the system has available)",
        "{env}={value}（限制了系统可用的 {system}）",
    ),
    "est.where.budget_held": W(
        "{env}={value} less the {held} the models loaded for visitors hold (caps the {system} the system has "
        "available)",
        "{env}={value} 减去为访客加载的模型占用的 {held}（限制了系统可用的 {system}）",
    ),
    "est.where.system_held": W("available system RAM (psutil), the {held} the loaded models hold already taken",
                               "系统可用内存（psutil），已加载模型占用的 {held} 已经扣除"),
    "est.where.frees": W(
        "{where}, plus {frees} freed first by unloading models no run is using (yours first, then the least "
        "recently used)",
        "{where}，另加先卸载没有运行在用的模型所释放的 {frees}（先卸载你自己的，再卸载最久未用的）",
    ),
    "est.never": W("never loads here: its float32 build needs {build} of RAM with the margin, in any dtype; this "
                    "machine has {ram} in all",
                    "在这台机器上永远加载不了：无论什么数据类型，它的 float32 构建都需要 {build} 内存（含余量），"
                    "而这台机器总共只有 {ram}"),
    "est.note.build": W(
        "first use builds the float32 checkpoint in RAM ({build} with the margin)",
        "首次使用时会先在内存中构建 float32 检查点（含余量 {build}）",
    ),
    "est.note.mps": W(
        "MPS shares RAM with the CPU: load-then-move holds both copies for a moment",
        "MPS 与 CPU 共用内存：先加载再搬运时，两份拷贝会短暂同时存在",
    ),
    "est.reason.auto": W(
        "needs {need} (weights + {margin} margin); the GPUs and RAM together have {pool} free",
        "需要 {need}（权重 + {margin} 余量）；所有 GPU 和内存加起来有 {pool} 空闲",
    ),
    "est.reason.cuda": W(
        "needs {need} of RAM while loading ({avail} available, {where}) and {vram} on {device} ({free} free)",
        "加载时需要 {need} 内存（可用 {avail}，{where}），"
        "并需要 {device} 上的 {vram}（空闲 {free}）",
    ),
    "est.reason.quantized": W(
        "needs {need} at the peak: it loads in {base} ({loaded} + {margin} margin), then quantizes layer by layer "
        "into {dtype} ({weights}, kept after); {avail} available ({where})",
        "峰值需要 {need}：先以 {base} 加载（{loaded} + {margin} 余量），再逐层量化成 {dtype}（{weights}，之后保留的部分）；"
        "可用 {avail}（{where}）",
    ),
    "est.reason.ram": W(
        "needs {need} (weights {weights} + {margin} margin); {avail} available ({where})",
        "需要 {need}（权重 {weights} + {margin} 余量）；"
        "可用 {avail}（{where}）",
    ),
    "est.reason.build": W(
        "needs {need} to build its float32 checkpoint in RAM on first use (float32 weights {f32} + {margin} "
        "margin), whatever dtype it is then loaded in (in {dtype} the load itself needs {load}); {avail} available "
        "({where})",
        "首次使用时需要 {need} 内存来构建它的 float32 检查点（float32 权重 {f32} + {margin} 余量），"
        "无论之后用什么数据类型加载（用 {dtype} 加载本身只需要 {load}）；可用 {avail}（{where}）",
    ),
    "est.refuse": W(
        "Not loading {model} in {dtype} on {device}: it {reason}. The margin covers activations and the KV "
        "cache (Accelerate's documented ~20%).{note} Try: {tips}.",
        "不加载 {model}（{dtype}，{device}）：它{reason}。"
        "余量用于激活值和 KV 缓存（Accelerate 文档给出的约 20%）。{note}可以试试：{tips}。",
    ),
    "est.refuse.note": W(" ({note}.)", "（{note}。）"),
    "est.sep": W("{a}; {b}", "{a}；{b}"),  # two items of a list (a longer list nests: a; (b; c))
    "est.tip.dtype": W("{dtype} would need {need}", "{dtype} 需要 {need}"),
    "est.tip.auto": W("device 'auto' spreads the layers over the GPUs and the CPU", "设备选 'auto' 会把各层分布到 GPU 和 CPU 上"),
    "est.tip.smaller": W("pick a smaller model (a smaller dtype would not fit either)", "换一个更小的模型（更小的数据类型也放不下）"),
    "est.tip.build": W(
        "a smaller model (no dtype avoids the float32 build's {build}; once built where there is the RAM, in the "
        "same synthetic models folder, it loads in the dtype you pick)",
        "换一个更小的模型（任何数据类型都绕不开 float32 构建所需的 {build}；在内存足够的机器上、"
        "用同一个合成模型文件夹构建好之后，就能按你选的数据类型加载）",
    ),
}
