"""The Speed tab: memory bandwidth, the KV cache's cost, the engines, and the gaps between them."""

from playground.core.i18n.words import W

PREFIXES = ("speed", "bw", "eng", "gap", "kv", "pcie")

TEXT: dict[str, W] = {
    # -- the tab --------------------------------------------------------------------
    "speed.tab": W("Speed", "速度"),
    "speed.intro": W(
        "Why is decode as fast as it is? Each new token reads every weight once, so memory bandwidth sets a "
        "floor under the time per token; everything above it is per-token overhead. Three measurements, live on "
        "this machine: what moving bytes costs, how the KV cache grows, and how close each decode engine gets to "
        "the bound.",
        "解码为什么是这个速度？每生成一个新 token 都要把全部权重读一遍，所以内存带宽给每个 token 的耗时定下了下限；"
        "高出下限的部分都是每个 token 的额外开销。下面三项都在这台机器上实时测量：搬运字节的代价、KV 缓存如何增长，"
        "以及各个解码引擎离这个上限有多近。",
    ),
    "speed.bw.title": W("### 1. Copy bandwidth: what `.to()` costs", "### 1. 拷贝带宽：`.to()` 的代价"),
    "speed.bw.intro": W(
        "Measures this machine's memory now (and each GPU's link), then sets the loaded model's measured "
        "`model.to(device)` beside what these rates predict and beside the tutorials' estimate.",
        "现在测量这台机器的内存（以及每块 GPU 的总线），然后把已加载模型实测的 `model.to(device)` 耗时，"
        "与这些速率的预测值和教程里的估算放在一起比较。",
    ),
    "speed.bw.run": W("Measure bandwidth", "测量带宽"),
    "speed.kv.title": W("### 2. The KV cache, growing", "### 2. KV 缓存的增长"),
    "speed.kv.intro": W(
        "Decodes from the loaded model one token at a time and reads the cache object's bytes at several "
        "lengths, against 2 × layers × KV heads × head dim × dtype bytes per token; then times a step with the "
        "cache against a forward over the whole sequence without it.",
        "用已加载的模型逐个 token 解码，在几个长度上读取缓存对象实际占用的字节数，与每个 token "
        "2 × 层数 × KV 头数 × 头维度 × 数据类型字节数的估算对比；再比较带缓存的一步和不带缓存、对整个序列做一次前向的耗时。",
    ),
    "speed.kv.run": W("Measure the KV cache", "测量 KV 缓存"),
    "speed.kv.bytes_plot": W("KV cache bytes against tokens held", "KV 缓存字节数与所存 token 数"),
    "speed.kv.time_plot": W("time per decode step (ms) against sequence length", "每步解码耗时（毫秒）与序列长度"),
    "speed.eng.title": W("### 3. Decode engines, up to the limit", "### 3. 解码引擎，逼近极限"),
    "speed.eng.intro": W(
        "The loaded model through `generate()`, the tutorials' manual loop with and without the KV cache, and "
        "(if ticked) a static KV cache under `torch.compile`, on the same prompt and greedy tokens.",
        "让已加载的模型分别通过 `generate()`、教程里带和不带 KV 缓存的手写循环，以及（勾选时）"
        "`torch.compile` 编译的静态 KV 缓存，用同一个提示词贪心生成同样数量的 token。",
    ),
    "speed.eng.tokens": W("new tokens per engine", "每个引擎生成的新 token 数"),
    "speed.eng.compile": W("include torch.compile (static cache)", "包括 torch.compile（静态缓存）"),
    "speed.eng.compile.info": W(
        "The first run compiles the decode step (about 11 s on a 2-core CPU with an empty compiler cache, 2-3 s once Inductor's disk cache holds it), shown as its own phase; "
        "later runs in this process reuse it.",
        "第一次运行会编译解码步骤（在 2 核 CPU 上、编译缓存为空时约 11 秒，Inductor 的磁盘缓存命中后 2-3 秒），作为单独的阶段显示；之后本进程内的运行会复用编译结果。",
    ),
    "speed.eng.run": W("Run the engines", "运行各引擎"),
    "eng.progress.generate": W("generate(), timed", "generate()，计时"),
    "eng.progress.profiled": W("generate(), profiled", "generate()，性能剖析"),
    "eng.progress.manual": W("the manual loop with the KV cache", "带 KV 缓存的手写循环"),
    "eng.progress.nocache": W("the manual loop without a cache", "不带缓存的手写循环"),
    "eng.progress.compiled": W("static cache + torch.compile", "静态缓存 + torch.compile"),
    "eng.progress.compiling": W("torch.compile: tracing and compiling the decode step (cache of {length} positions)",
                                "torch.compile：追踪并编译解码步骤（缓存 {length} 个位置）"),
    "speed.running": W("⏳ measuring…", "⏳ 测量中……"),
    "speed.compiling": W(
        "⏳ `torch.compile` is tracing and compiling the decode step (started {at}): seconds to tens of seconds, depending on the processor and the compiler's cache; "
        "the other engines' rows follow.",
        "⏳ `torch.compile` 正在追踪并编译解码步骤（开始于 {at}）：视处理器和编译缓存而定，几秒到几十秒；其余引擎的结果随后给出。",
    ),
    "speed.zerogpu": W(
        "on ZeroGPU a GPU is lent only inside a @spaces.GPU call; copies timed outside one would not be real",
        "在 ZeroGPU 上，GPU 只在 @spaces.GPU 调用内部借用；在调用之外计时的拷贝不是真实的",
    ),
    # -- bandwidth ---------------------------------------------------------------------
    "bw.head.rate": W("rate", "速率"),
    "bw.head.value": W("measured", "实测"),
    "bw.head.how": W("how it was measured", "测量方法"),
    "bw.head.bounds": W("what it bounds", "它限制什么"),
    "bw.kind.read": W("streaming read", "流式读取"),
    "bw.kind.memcpy": W("memcpy (read + written)", "memcpy（读 + 写）"),
    "bw.kind.cast": W("float32 → bfloat16 cast", "float32 → bfloat16 转换"),
    "bw.kind.h2d_pinned": W("host → device, pinned", "主机 → 设备，锁页内存"),
    "bw.kind.h2d_pageable": W("host → device, pageable", "主机 → 设备，可分页内存"),
    "bw.kind.d2h_pinned": W("device → host, pinned", "设备 → 主机，锁页内存"),
    "bw.kind.d2h_pageable": W("device → host, pageable", "设备 → 主机，可分页内存"),
    "bw.how.read": W(
        "`sum()` over {size} of float32 written first ({threads} threads); the largest CPU cache is {llc}",
        "对 {size} 先写入过的 float32 数据做 `sum()`（{threads} 个线程）；最大的 CPU 缓存为 {llc}",
    ),
    "bw.how.memcpy": W(
        "`dst.copy_(src)` of {size}, both already touched: bytes read + bytes written per second",
        "`dst.copy_(src)` 拷贝 {size}，两边内存都已触碰过：每秒读 + 写的字节数",
    ),
    "bw.how.cast": W(
        "`.to(torch.bfloat16)` of {size} of float32 into new memory: {per_gb} s per GB of float32",
        "把 {size} 的 float32 `.to(torch.bfloat16)` 到新内存：每 GB float32 需要 {per_gb} 秒",
    ),
    "bw.how.gpu": W("`copy_` of {size}, synchronised before and after", "`copy_` 拷贝 {size}，前后都做了同步"),
    "bw.bounds.read": W(
        "decode: each token reads every weight once, so tokens/s ≤ this / weight bytes",
        "解码：每个 token 都把全部权重读一遍，所以 tokens/s ≤ 此速率 / 权重字节数",
    ),
    "bw.bounds.memcpy": W(
        "a `.to()` that copies within RAM (it reads and writes every byte)",
        "在内存内复制的 `.to()`（每个字节都要读一次、写一次）",
    ),
    "bw.bounds.cast": W("`model.to(torch.bfloat16)` on the CPU", "在 CPU 上执行 `model.to(torch.bfloat16)`"),
    "bw.bounds.h2d_pageable": W(
        "`model.to('cuda')`: it copies from ordinary (pageable) memory", "`model.to('cuda')`：它从普通（可分页）内存拷贝"
    ),
    "bw.bounds.h2d_pinned": W(
        "the ceiling: pinned memory skips CUDA's staging buffer", "上限：锁页内存跳过了 CUDA 的中转缓冲区"
    ),
    "bw.bounds.d2h": W("`.cpu()` / `.to('cpu')` of results", "把结果 `.cpu()` / `.to('cpu')`"),
    "bw.gpu.none": W("**GPU:** none measured: {reason}.", "**GPU**：没有可测的：{reason}。"),
    "bw.gpu.link": W(
        "**{device}** PCIe link: generation {gen} × {width} lanes (now gen {gen_now} × {width_now}) = {rate} GB/s in "
        "theory each way.",
        "**{device}** 的 PCIe 链路：第 {gen} 代 × {width} 条通道（当前为第 {gen_now} 代 × {width_now}），理论上每个方向 {rate} GB/s。",
    ),
    "bw.gpu.no_link": W("**{device}** PCIe link: {reason}.", "**{device}** 的 PCIe 链路：{reason}。"),
    "bw.gap.title": W("**The loaded model's `.to()`**", "**已加载模型的 `.to()`**"),
    "bw.gap.head.what": W("`.to()` of these weights", "这些权重的 `.to()`"),
    "bw.gap.head.time": W("time", "耗时"),
    "bw.gap.measured": W("measured (the load report's migrate phase)", "实测（加载报告中的迁移阶段）"),
    "bw.gap.predicted": W("predicted from the rates above", "根据上面的速率预测"),
    "bw.gap.pinned": W("from pinned memory (the link's ceiling)", "从锁页内存（链路的上限）"),
    "bw.gap.link": W("at the PCIe link's theoretical rate", "按 PCIe 链路的理论速率"),
    "bw.gap.tutorial": W("the tutorials' estimate: bytes / 16 GB/s", "教程的估算：字节数 / 16 GB/s"),
    "bw.gap.cast": W("`.to(torch.bfloat16)` of these weights here, predicted", "在这里对这些权重 `.to(torch.bfloat16)` 的预测耗时"),
    "bw.gap.none": W(
        "Load a model to compare its `.to()` with these rates.", "加载一个模型，就能把它的 `.to()` 与这些速率对比。"
    ),
    "gap.noop": W(
        "Nothing moved: the weights already lived on {device}, so `Tensor.to` returned each of the {tensors} "
        "tensors itself, and no byte crossed any link. The {measured} ms measured is the walk over them "
        "({per} µs a tensor). The tutorials' {tutorial} ms is {size} MB over a PCIe 3.0 link this move never uses.",
        "什么也没有搬：权重本来就在 {device} 上，所以 `Tensor.to` 对这 {tensors} 个张量都直接返回了它本身，"
        "没有一个字节经过任何总线。实测的 {measured} 毫秒只是遍历它们的时间（每个张量 {per} 微秒）。"
        "教程估算的 {tutorial} 毫秒，是 {size} MB 经过 PCIe 3.0 链路的时间，而这次迁移根本不走那条链路。",
    ),
    "gap.cuda": W(
        "{size} MB from pageable memory at the {rate} GB/s measured here predicts {predicted} ms; `.to('{device}')` "
        "took {measured} ms. The other {extra} ms ({per} µs for each of {tensors} tensors) is not explained by that "
        "rate: `.to()` also allocates each tensor on the device and makes one copy call per tensor, and a pageable "
        "copy's rate varies with its size; this measurement does not split them. The tutorials' {tutorial} ms "
        "assumes 16 GB/s; their \"0.5-2 s in practice\" is not a copy time either: a process's first CUDA call "
        "also creates its CUDA context, which `python -m playground selfcheck` times apart.",
        "{size} MB 从可分页内存以这里实测的 {rate} GB/s 传输，预测为 {predicted} 毫秒；`.to('{device}')` 实际用了 "
        "{measured} 毫秒。多出的 {extra} 毫秒（{tensors} 个张量，每个 {per} 微秒）不能用这个速率解释："
        "`.to()` 还要为每个张量在设备上分配内存、逐个张量发起拷贝，可分页拷贝的速率也随大小变化；这次测量没有把它们分开。"
        "教程的 {tutorial} 毫秒假定了 16 GB/s；它们说的“实际 0.5-2 秒”也不是拷贝时间："
        "进程里第一次调用 CUDA 还要创建 CUDA 上下文，`python -m playground selfcheck` 会单独计时这一步。",
    ),
    "gap.cuda_mapped": W(
        "{size} MB from pageable memory at the {rate} GB/s measured here predicts {predicted} ms; `.to('{device}')` "
        "took {measured} ms. That rate was measured on memory already in RAM, but {mapped} MB of these weights were "
        "still memory-mapped from the checkpoint (a load in the checkpoint's own dtype copies nothing): the copy read "
        "them through page faults, from the disk for pages not in the page cache. The other {extra} ms ({per} µs "
        "for each of {tensors} tensors) holds those faults, allocating each tensor on the device and one copy call "
        "per tensor; this measurement does not split them. The tutorials' {tutorial} ms assumes 16 GB/s; their "
        "\"0.5-2 s in practice\" is not a copy time either: a process's first CUDA call also creates its CUDA "
        "context, which `python -m playground selfcheck` times apart.",
        "{size} MB 从可分页内存以这里实测的 {rate} GB/s 传输，预测为 {predicted} 毫秒；`.to('{device}')` 实际用了 "
        "{measured} 毫秒。这个速率是在已经驻留内存的数据上测的，而这些权重中有 {mapped} MB 当时仍是从检查点文件内存映射的"
        "（按检查点自身的数据类型加载时不做任何复制）：拷贝要通过缺页中断读取它们，不在页缓存里的页还要从磁盘读。"
        "多出的 {extra} 毫秒（{tensors} 个张量，每个 {per} 微秒）包括这些缺页、为每个张量在设备上分配内存和逐个张量发起拷贝；"
        "这次测量没有把它们分开。"
        "教程的 {tutorial} 毫秒假定了 16 GB/s；它们说的“实际 0.5-2 秒”也不是拷贝时间："
        "进程里第一次调用 CUDA 还要创建 CUDA 上下文，`python -m playground selfcheck` 会单独计时这一步。",
    ),
    "gap.copy": W(
        "A copy of {size} MB within this machine's memory at {rate} GB/s (read + written) predicts {predicted} ms; "
        "`.to('{device}')` took {measured} ms over {tensors} tensors.",
        "在本机内存中复制 {size} MB，按 {rate} GB/s（读 + 写）预测为 {predicted} 毫秒；"
        "`.to('{device}')` 实际在 {tensors} 个张量上用了 {measured} 毫秒。",
    ),
    "gap.auto": W(
        "`device_map='auto'` placed the weights while loading: there is no separate `.to()` to compare.",
        "`device_map='auto'` 在加载时就放置好了权重：没有单独的 `.to()` 可以比较。",
    ),
    "gap.no_rates": W(
        "No rate was measured for {device} here, so nothing can be predicted for its `.to()` ({measured} ms).",
        "这里没有测到 {device} 的速率，所以无法预测它的 `.to()`（{measured} 毫秒）。",
    ),
    "pcie.no_match": W(
        "no NVML device at this PCI bus id: the driver and CUDA disagree about this GPU",
        "在这个 PCI 总线 ID 上没有 NVML 设备：驱动和 CUDA 对这块 GPU 的看法不一致",
    ),
    "pcie.no_link": W("NVML does not report this GPU's PCIe link (a vGPU or an SXM board?)",
                      "NVML 没有报告这块 GPU 的 PCIe 链路（是 vGPU 或 SXM 板卡吗？）"),
    # -- the KV cache ----------------------------------------------------------------------
    "kv.summary": W(
        "**Estimate:** 2 × {layers} layers × {kv_heads} KV heads × {head_dim} head dim × {dtype_bytes} bytes "
        "({dtype}) = **{per_token} bytes per token**. **Measured** from the `{cache}`'s key and value tensors at "
        "{n} lengths: **{slope} bytes per token**, largest difference from the estimate {error}.",
        "**估算：** 2 × {layers} 层 × {kv_heads} 个 KV 头 × {head_dim} 头维度 × {dtype_bytes} 字节（{dtype}）"
        "= **每个 token {per_token} 字节**。**实测**：在 {n} 个长度上读取 `{cache}` 的键和值张量，"
        "**每个 token {slope} 字节**，与估算的最大差异为 {error}。",
    ),
    "kv.head.tokens": W("tokens held", "所存 token 数"),
    "kv.head.measured": W("cache bytes, measured", "缓存字节数（实测）"),
    "kv.head.estimate": W("estimate", "估算"),
    "kv.head.error": W("difference", "差异"),
    "kv.head.with": W("step with cache", "带缓存的一步"),
    "kv.head.without": W("step without cache", "不带缓存的一步"),
    # The plots' series keep one bilingual name: Gradio's LinePlot keeps the colour legend of the first
    # names it drew, so series renamed by a language switch would be drawn in no colour at all.
    "kv.series.measured": W("measured", "实测"),
    "kv.series.estimate": W("estimate", "估算"),
    "kv.series.with": W("with the KV cache", "带 KV 缓存"),
    "kv.series.without": W("without it", "不带缓存"),
    "bw.gap.tensors": W("{n} tensors", "{n} 个张量"),
    "kv.axis.tokens": W("tokens in the cache", "缓存中的 token 数"),
    "kv.axis.bytes": W("bytes", "字节"),
    "kv.axis.ms": W("ms per step", "每步毫秒"),
    "kv.axis.series": W("line", "曲线"),
    "kv.quadratic": W(
        "At {first} tokens a step without the cache took {wo_first} ms, at {last} tokens {wo_last} ms: it grows "
        "with the sequence, because every step recomputes keys and values for all the tokens before it, so a "
        "whole generation costs O(n²). With the cache a step took {w_first} ms and {w_last} ms: it computes one "
        "token's keys and values and reads the rest.",
        "在 {first} 个 token 时，不带缓存的一步用了 {wo_first} 毫秒，到 {last} 个 token 时用了 {wo_last} 毫秒："
        "它随序列变长而变慢，因为每一步都要为之前所有 token 重新计算键和值，整个生成过程的代价是 O(n²)。"
        "带缓存时一步分别用了 {w_first} 毫秒和 {w_last} 毫秒：它只计算一个新 token 的键和值，其余的直接读取。",
    ),
    "kv.noisy": W(
        "These timings do not show the growth this time (without the cache: {wo_first} ms at {first} tokens, "
        "{wo_last} ms at {last}; with it: {w_first} ms and {w_last} ms): other work on the machine disturbed them. "
        "Measure again.",
        "这次的计时没有显示出增长（不带缓存：{first} 个 token 时 {wo_first} 毫秒，{last} 个时 {wo_last} 毫秒；"
        "带缓存：{w_first} 毫秒和 {w_last} 毫秒）：机器上的其他工作干扰了测量。请再测一次。",
    ),
    # -- decode engines ---------------------------------------------------------------------
    "eng.head.engine": W("engine", "引擎"),
    "eng.head.tokens": W("new tokens", "新 token 数"),
    "eng.head.rate": W("decode tokens/s", "解码 tokens/s"),
    "eng.head.same": W("same tokens as generate()", "与 generate() 的 token 相同"),
    "eng.head.compile": W("compile", "编译"),
    "eng.head.percent": W("% of the bound", "占上限的百分比"),
    "eng.head.overhead": W("overhead per token", "每个 token 的额外开销"),
    "eng.same.yes": W("yes", "是"),
    "eng.same.no": W("no: first differs at token {i}", "否：第 {i} 个 token 起不同"),
    "eng.parted.tie": W(
        "**Why {engine} chose other tokens from token {token}:** a near-tie. There generate()'s two best tokens were "
        "{margin} apart in its {dtype} logits, and recomputing the whole sequence without the cache gives logits that "
        "differ from the cached step's by up to {gap} (the same arithmetic in another order, rounded differently; in "
        "16-bit formats by whole rounding steps). Greedy decoding takes the larger of two nearly equal numbers, so "
        "the rounding picked the other token; after it the two texts continue from different contexts. Neither is "
        "wrong.",
        "**{engine}从第 {token} 个 token 起选了别的 token 的原因**：几乎打平。在那一步，generate() 的两个最佳 token 在它的 "
        "{dtype} logits 里只差 {margin}；而不用缓存、整段重算得到的 logits 与带缓存那一步的相差最多 {gap}"
        "（同样的算术换了顺序，舍入不同；16 位格式里差的是整个舍入步长）。贪心解码取两个几乎相等的数中较大的那个，"
        "于是舍入选中了另一个 token；此后两段文本从不同的上下文继续。两者都没有错。",
    ),
    "eng.parted.other": W(
        "**Why {engine} chose other tokens from token {token}:** not a near-tie. There generate()'s choice led by "
        "{margin} in its {dtype} logits, more than the largest difference between a cached step and a full recompute "
        "({gap}): something else differs between the two loops.",
        "**{engine}从第 {token} 个 token 起选了别的 token 的原因**：不是几乎打平。在那一步，generate() 的选择在它的 "
        "{dtype} logits 里领先 {margin}，大于带缓存的一步与整段重算之间的最大差异（{gap}）：两个循环之间还有别的不同。",
    ),
    "eng.bound": W(
        "**The bandwidth bound:** {rate} GB/s ({how}) / {size} of weights read per token = **{bound} tokens/s** "
        "for `{model}` on {device} in {dtype}.",
        "**带宽上限**：{rate} GB/s（{how}）/ 每个 token 读取的权重 {size} = **{bound} tokens/s**"
        "（`{model}`，{device}，{dtype}）。",
    ),
    "eng.in_cache": W(
        "These {size} of weights fit in the CPU's last-level cache ({llc}), so after the first token they are "
        "mostly read from the cache, not from RAM: an engine can beat the RAM bound (over 100%).",
        "这 {size} 的权重能放进 CPU 的末级缓存（{llc}），所以第一个 token 之后主要是从缓存而不是内存读取："
        "引擎可以超过内存带宽上限（超过 100%）。",
    ),
    "eng.limit.overhead": W(
        "**What limits {engine} here: per-token overhead.** Profiled over {tokens} tokens, the matrix "
        "multiplications, which read every weight once per token, took only {share}% of the time; the rest is "
        "Python, dispatch and many small operators (the largest: {others}). A compiled static-cache step removes "
        "most of it.",
        "**这里限制 {engine} 的是每个 token 的额外开销。** 对 {tokens} 个 token 做性能剖析：每个 token 都要把全部权重读一遍的"
        "矩阵乘法只占了 {share}% 的时间；其余是 Python、算子分派和许多小算子（最大的几个：{others}）。"
        "编译后的静态缓存解码步骤能去掉其中大部分。",
    ),
    "eng.limit.bandwidth": W(
        "**What limits {engine} here: reading the weights.** Profiled over {tokens} tokens, the matrix "
        "multiplications, which read every weight once per token, took {share}% of the time, reading at {rate} "
        "GB/s where a streaming read reaches {read} GB/s. Only fewer bytes per token (a smaller dtype) or a kernel "
        "that reads faster (the compiled engine's, over every core) moves this much.",
        "**这里限制 {engine} 的是读取权重。** 对 {tokens} 个 token 做性能剖析：每个 token 都要把全部权重读一遍的矩阵乘法"
        "占了 {share}% 的时间，读取速度为 {rate} GB/s，而流式读取能达到 {read} GB/s。"
        "要明显加快，只能让每个 token 读的字节更少（更小的数据类型），或者用读得更快的内核（编译引擎用上所有核心的内核）。",
    ),
    "eng.limit.offloaded": W(
        "**What limits {engine} here: bringing the offloaded weights in.** {blocks} of the model's {of} blocks "
        "({offloaded}) are offloaded ({became}): Accelerate's hooks bring them to the device the forward pass runs "
        "on, block by block, for every token. Measured on this model: {moved} moved per token, {hook_ms} of "
        "{step_ms} ms per decode step inside the hooks, and the time reading their pages in lands in the forward "
        "pass (the profile's largest other operators over {tokens} tokens: {others}). Neither per-token overhead "
        "nor a compiled step is what holds it back: fewer offloaded blocks (higher limits) or a smaller dtype is.",
        "**这里限制 {engine} 的是把卸载的权重读进来。** 模型的 {of} 个块中有 {blocks} 个（{offloaded}）被卸载了"
        "（{became}）：Accelerate 的钩子在每个 token 都把它们逐块搬到前向传播所在的设备上。在这个模型上实测："
        "每个 token 搬运 {moved}，每个解码步骤 {step_ms} ms 中有 {hook_ms} ms 在钩子里，把它们的页读进来的时间"
        "落在前向传播里（对 {tokens} 个 token 做性能剖析，最大的其他算子：{others}）。"
        "限制它的不是每个 token 的额外开销，也不是编译：更少的卸载块（更高的限额）或更小的数据类型才有用。",
    ),
    "eng.offloaded": W(
        "⚠️ This model is offloaded: {blocks} of its {of} blocks ({offloaded}) are not kept where the forward pass "
        "runs, and the bound above assumes every weight is read from RAM.",
        "⚠️ 这个模型被卸载了：它的 {of} 个块中有 {blocks} 个（{offloaded}）不在前向传播所在的地方，"
        "而上面的上限假设所有权重都从内存中读取。",
    ),
    "eng.limit.unknown": W("Too few tokens to measure a decode rate.", "token 太少，测不出解码速率。"),
    "eng.busy": W("**Decode engines**: {said}", "**解码引擎**：{said}"),
    "eng.nocache_faster": W(
        "**Why the loop without the cache was faster here ({bare} against {cached} tokens/s, {n} tokens):** after a "
        "{prompt}-token prompt its longest step ran {longest} tokens through the model. A step over {longest} "
        "tokens reads the same weights as a step over one, and that read, with the per-step overhead, is most of a "
        "step; at these lengths the cache's own work (appending each step's keys and values, attending over them) "
        "cost more than the recomputation it saves. Without the cache a step grows with the sequence, so the cache "
        "wins as sequences get longer: the KV cache panel above times both against the length.",
        "**为什么这里不用缓存的循环反而更快（{bare} 对 {cached} tokens/s，{n} 个 token）：** 提示词有 {prompt} 个 token，"
        "它最长的一步把 {longest} 个 token 过了一遍模型。对 {longest} 个 token 算一步和对一个 token 算一步读取的是同样的权重，"
        "而读取权重加上每步的固定开销占了一步的大部分；在这个长度下，缓存自身的工作（每步追加键和值、对它们做注意力）"
        "比它省下的重新计算还贵。不用缓存时，一步的耗时随序列变长而增加，所以序列越长缓存越占优势：上面的 KV 缓存面板"
        "按长度给两者计了时。",
    ),
    "eng.compiled_note": W(
        "`static cache + torch.compile`: {how}. On a CPU its weights are given in `[out, in]` memory order so that "
        "each one-row matmul is one parallel, vectorised loop over contiguous memory.",
        "`static cache + torch.compile`：{how}。"
        "在 CPU 上，它的权重按 `[out, in]` 的内存顺序提供，这样每个单行矩阵乘都是一个在连续内存上并行、向量化的循环。",
    ),
    "eng.compiled.now": W("compiled now, in {seconds} s", "这次现编译，用了 {seconds} 秒"),
    "eng.compiled.reused": W("reused a compilation made earlier in this process ({seconds} s then)",
                             "复用了本进程先前的编译结果（当时用了 {seconds} 秒）"),
    "eng.compiled.reused_unknown": W("reused a compilation made earlier in this process",
                                     "复用了本进程先前的编译结果"),
    "eng.compiled.reused_cell": W("reused ({seconds} s then)", "复用（当时 {seconds} 秒）"),
    "eng.compiled.reused_cell_unknown": W("reused", "复用"),
}
