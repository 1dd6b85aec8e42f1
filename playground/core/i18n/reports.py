"""The load report: its phases (names and notes), hints, notes, VRAM readings, the memory timeline."""

from playground.core.i18n.words import W

PREFIXES = ("report", "phase", "hint", "note", "label", "vram", "timeline")

TEXT: dict[str, W] = {
    "report.phase": W("phase", "阶段"),
    "report.what": W("what ran", "执行了什么"),
    "report.time": W("time", "耗时"),
    "report.rss": W("RSS before → after", "RSS 之前 → 之后"),
    "report.drss": W("Δ RSS", "RSS 变化"),
    "report.vram": W("VRAM after", "之后的显存"),
    "report.became": W("placed on {became}", "放在 {became}"),
    "report.import": W("find the model class (imports its code once per process)", "找到模型类（每个进程只导入一次它的代码）"),
    "report.estimate": W("check it fits: build on the meta device, no weights", "检查能否放下：在 meta 设备上构建，不含权重"),
    "report.check": W("memory check", "内存检查"),
    "report.tokenizer": W("check the safetensors files, load the tokenizer", "检查 safetensors 文件，加载分词器"),
    "report.context": W("create the CUDA context (the GPU's first use in this process)",
                        "创建 CUDA 上下文（本进程第一次使用这块 GPU）"),
    "report.unload": W("free the model loaded before (gc, malloc_trim)", "释放之前加载的模型（gc、malloc_trim）"),
    "report.mmap": W(
        "float32 on the CPU from a float32 checkpoint: Transformers maps the file into memory instead of "
        "copying it, so RSS grows as the pages are first read (during the first generation), not during the "
        "load.",
        "用 float32 检查点在 CPU 上加载 float32："
        "Transformers 把文件映射到内存而不是复制，所以 RSS 在页面第一次被读取时（第一次生成时）才增长，"
        "而不是在加载时。",
    ),
    "report.load": W("`from_pretrained(...)`: the checkpoint on disk → the model (mapped, or read)", "`from_pretrained(...)`：磁盘上的检查点 → 模型（映射或读入）"),
    "report.load_auto": W(
        "`from_pretrained(...)` with `device_map='auto'`",
        "`from_pretrained(...)`，使用 `device_map='auto'`",
    ),
    "report.placed": W("(placed while loading)", "（加载时已放置）"),
    "report.params": W("Parameters", "参数量"),
    "report.buffers": W("buffers", "缓冲区"),
    "report.weights": W("weights", "权重"),
    "report.weights_how": W("Σ numel × element size; a quantized weight: of the tensors inside it",
                            "Σ 元素个数 × 每个元素的字节数；量化权重按它内部的张量计"),
    "report.disk": W("on disk", "磁盘上"),
    "report.ram_growth": W(
        "Measured RAM growth from from_pretrained to eval(): {delta} against {weights} of weights in theory. "
        "System RAM available after: {avail}.",
        "从 from_pretrained 到 eval() 实测内存增长：{delta}，理论权重大小：{weights}。加载后系统可用内存：{avail}。",
    ),
    "report.dtype": W("dtype", "数据类型"),
    "report.migration": W("migration", "迁移"),
    "report.hint": W("hint", "提示"),
    "report.placement": W("placement", "放置"),
    "timeline.title": W(
        "Memory timeline (sampled at 15 Hz while loading and generating)",
        "内存时间线（加载和生成期间以 15 Hz 采样）",
    ),
    "timeline.rss_start": W("RSS at start", "开始时 RSS"),
    "timeline.rss_peak": W("peak RSS", "RSS 峰值"),
    "timeline.avail_min": W("lowest available", "最低可用内存"),
    "hint.fp16_cpu_slow": W(
        "float16 halves memory; this CPU has no native float16 arithmetic, so PyTorch converts to float32 inside "
        "the operations. The conversion costs time and the halved reads save some: which wins depends on the "
        "model, so no factor is given here; Compare measures both dtypes on yours.",
        "float16 让内存减半；这颗 CPU 没有原生 float16 运算，PyTorch 会在运算内部转换成 float32。"
        "转换要花时间，读取减半又能省时间：哪边占上风取决于模型，所以这里不给倍数；“对比”标签页会在你的模型上实测两种数据类型。",
    ),
    "hint.bf16_cpu_emulated": W(
        "bfloat16 halves memory; this CPU lacks AVX512-BF16/AMX, so matmuls are emulated and may be slower "
        "than float32.",
        "bfloat16 让内存减半；这颗 CPU 没有 AVX512-BF16/AMX，矩阵乘法是模拟的，"
        "可能比 float32 还慢。",
    ),
    "hint.bf16_cpu_native": W(
        "bfloat16 halves memory and this CPU computes it natively (AVX512-BF16/AMX).",
        "bfloat16 让内存减半，而且这颗 CPU 原生支持它（AVX512-BF16/AMX）。",
    ),
    "hint.bf16_gpu_old": W(
        "{name} (compute {capability}) has no bfloat16 tensor cores: it runs, emulated and slowly. Prefer "
        "float16 on this GPU.",
        "{name}（计算能力 {capability}）没有 bfloat16 张量核心：能运行，但是模拟的，很慢。"
        "这块 GPU 上请用 float16。",
    ),
    "hint.fp32_gpu": W(
        "float32 on a GPU uses twice the memory of float16/bfloat16 and skips the tensor cores' fastest path.",
        "GPU 上的 float32 占用的显存是 float16/bfloat16 的两倍，"
        "也用不上张量核心最快的路径。",
    ),
    "hint.bf16_mps": W("bfloat16 on MPS needs macOS 14 or newer.", "MPS 上的 bfloat16 需要 macOS 14 或更新版本。"),
    "hint.quantized": W(
        "{dtype} is weight-only: each nn.Linear keeps small integers with float32 scales, the embeddings and the "
        "other layers stay float32, and every step turns the integers back into float32 to multiply. Fewer bytes; "
        "whether it is faster here is for Compare to measure.",
        "{dtype} 只量化权重：每个 nn.Linear 保存小整数和 float32 的缩放因子，词嵌入和其他层仍是 float32，"
        "每一步都要把整数变回 float32 再做乘法。字节更少；这里是否更快，由“对比”来测。",
    ),
    "hint.auto": W(
        "auto keeps the dtype stored in the checkpoint (torch_dtype/dtype in config.json).",
        "auto 保留检查点里存储的数据类型（config.json 中的 torch_dtype/dtype）。",
    ),
    "note.migrate.noop": W(
        "no-op: the weights were already on {device}, so Tensor.to() returned each tensor itself without "
        "copying (same data_ptr before and after); the time is just the walk over every parameter and buffer.",
        "空操作：权重本来就在 {device} 上，所以 Tensor.to() 直接返回了每个张量本身，"
        "没有复制（前后 data_ptr 相同）；这段时间只是遍历所有参数和缓冲区。",
    ),
    "note.migrate.copied": W(
        "copied every parameter and buffer from {src} to {dst} and repointed the module at them.",
        "把每个参数和缓冲区从 {src} 复制到了 {dst}，并让模块指向新的张量。",
    ),
    "note.migrate.auto_hooks": W(
        "device_map='auto' placed each layer while loading, so there is no separate .to(). Accelerate spread "
        "the layers over several devices and hooked them (see hf_device_map); calling .to() on such a model "
        "is refused.",
        "device_map='auto' 在加载时就放置好了每一层，所以没有单独的 .to()。"
        "Accelerate 把各层分布到多个设备上并挂了钩子（见 hf_device_map）；"
        "对这样的模型调用 .to() 会被拒绝。",
    ),
    "note.migrate.auto_single": W(
        "device_map='auto' placed each layer while loading, so there is no separate .to(). Everything fit on "
        "one device, so Transformers loaded it there directly: no hooks, and no hf_device_map (it is set "
        "only when layers span devices or disk).",
        "device_map='auto' 在加载时就放置好了每一层，所以没有单独的 .to()。"
        "所有层都放得进一个设备，Transformers 直接加载到那里：没有钩子，"
        "也没有 hf_device_map（只有当层跨设备或磁盘时才会设置）。",
    ),
    "note.dtype.auto": W("auto: kept the checkpoint's own dtype, {dtype}", "auto：保留检查点自己的数据类型 {dtype}"),
    "note.dtype.cast": W(
        "asked for {dtype} from a {stored} checkpoint: from_pretrained cast the weights while loading, copying "
        "each into new memory ({weights})",
        "从 {stored} 检查点要求 {dtype}：from_pretrained 在加载时转换了权重，每个都复制到新的内存里（{weights}）",
    ),
    "note.dtype.mapped": W(
        "asked for {dtype}, the checkpoint's own dtype: no cast, the weights are mapped from the file unchanged "
        "({mapped} of {weights} in the mapping)",
        "要求 {dtype}，正是检查点自己的数据类型：没有转换，权重原样映射自文件（{weights} 中有 {mapped} 在映射里）",
    ),
    "note.dtype.same": W(
        "asked for {dtype}, the checkpoint's own dtype: no cast ({mapped} of {weights} still mapped from the file)",
        "要求 {dtype}，正是检查点自己的数据类型：没有转换（{weights} 中有 {mapped} 仍映射自文件）",
    ),
    "note.dtype.unknown": W(
        "asked for {dtype}; the checkpoint's stored dtype could not be read, so whether it was cast is not known",
        "要求 {dtype}；读不到检查点存储的数据类型，所以不知道是否转换过",
    ),
    # why there are no VRAM readings
    "vram.no_cuda_build": W("no VRAM to measure: this PyTorch build has no CUDA",
                            "没有显存可测：这个 PyTorch 版本不含 CUDA"),
    "vram.no_device": W("no VRAM to measure: no CUDA device visible", "没有显存可测：看不到 CUDA 设备"),
    "vram.no_nvml_package": W("NVML readings need the nvidia-ml-py package", "NVML 读数需要安装 nvidia-ml-py 包"),
    "vram.no_driver": W("no NVIDIA driver to ask (NVML: {error})", "没有可查询的 NVIDIA 驱动（NVML：{error}）"),
    # notes of the load's phases
    "phase.estimate": W("built on the meta device: needs {need} with the margin, {avail} available ({where})",
                        "在 meta 设备上构建：含余量需要 {need}，可用 {avail}（{where}）"),
    "phase.import": W("resolved {cls}; its module is imported once per process", "找到 {cls}；它的模块每个进程只导入一次"),
    "phase.import_torchao": W("resolved {cls}, and imported torchao for the quantized dtype (its log lines kept off the "
                              "console); each module is imported once per process",
                              "找到 {cls}，并为量化数据类型导入了 torchao（它的日志没有打印到控制台）；每个模块每个进程只导入一次"),
    "phase.eval": W("dropout off; no memory moves", "关闭 dropout；没有内存移动"),
    "phase.tokenizer": W("every safetensors file complete; {cls} loaded from the files",
                         "每个 safetensors 文件都完整；已从文件加载 {cls}"),
    "phase.unload": W("freed {model}: RSS fell by {freed}", "释放了 {model}：RSS 减少了 {freed}"),
    "phase.context": W("the first CUDA call on {device} created its context: {host} of host RAM, {vram} of VRAM",
                       "{device} 上的第一次 CUDA 调用创建了它的上下文：主机内存 {host}，显存 {vram}"),
    "label.synthetic": W("random weights: the text is noise; the timings and memory are real",
                         "随机权重：生成的文字没有意义；计时和内存是真实的"),
    # why a synthetic model has fewer parameters than its published size (playground.load.synthetic.size_note)
    "label.synthetic_size": W(
        "{here} parameters, not the published {published}: it has the bundled {vocab}-token vocabulary instead of "
        "the published {published_vocab} tokens, so its {where} has {extra} fewer ({here} + {extra} = {total})",
        "{here} 个参数，而不是公布的 {published}：它用内置的 {vocab} 个 token 的词表，而不是公布的 {published_vocab} 个，"
        "所以它的{where}少了 {extra} 个参数（{here} + {extra} = {total}）",
    ),
    "label.embedding": W("embedding (tied to the output head)", "词嵌入（与输出头共享）"),
    "label.embedding_head": W("embedding and output head", "词嵌入和输出头"),
    "phase.build": W(
        "checkpoint written with random weights, because {why}",
        "用随机权重写出了检查点，原因：{why}",
    ),
    "report.build": W("writing the synthetic checkpoint", "写出合成模型的检查点"),
    "report.quantize": W("`quantize_(model, config)`: torchao swaps each chosen `nn.Linear`'s weight for a quantized tensor",
                         "`quantize_(model, config)`：torchao 把选中的每个 `nn.Linear` 的权重换成量化张量"),
    # the download phase's note in the load report
    "phase.download": W("downloaded {bytes} ({files} files) from the Hub at {rate} into the Hugging Face cache",
                        "从 Hub 下载了 {bytes}（{files} 个文件），速度 {rate}，存入 Hugging Face 缓存"),
    "phase.download_cached": W("from the cache: 0 bytes downloaded ({files} files already in the Hugging Face cache)",
                               "来自缓存：下载 0 字节（{files} 个文件已在 Hugging Face 缓存中）"),
    "report.download": W("the Hub's files into the Hugging Face cache (only those a causal LM needs)",
                         "把 Hub 上的文件下载到 Hugging Face 缓存（只下载因果语言模型需要的文件）"),
    # the phases of a load and a generation, as the tables and the timeline's legend name them
    "phase.name.download": W("download", "下载"),
    "phase.name.estimate": W("estimate", "估算"),
    "phase.name.import": W("import", "导入"),
    "phase.name.tokenizer": W("tokenizer", "分词器"),
    "phase.name.context": W("CUDA context", "CUDA 上下文"),
    "phase.name.unload": W("unload", "卸载"),
    "phase.name.load": W("load", "加载"),
    "phase.name.migrate": W("migrate", "迁移"),
    "phase.name.quantize": W("quantize", "量化"),
    "phase.name.eval": W("eval", "eval（评估模式）"),
    "phase.name.build": W("build", "构建"),
    "phase.name.warm-up": W("warm-up", "预热"),
    "phase.name.prefill": W("prefill", "预填充"),
    "phase.name.decode": W("decode", "解码"),
    "phase.name.agreement": W("agreement and profile (after the timing)", "一致性与性能剖析（计时之后）"),
    "phase.name.": W("(before the first phase)", "（第一个阶段之前）"),
    # the load report
    "report.in_dtype": W("{size} in {dtype}", "{size}（{dtype}）"),
    "report.vram_cell": W("cuda:{index}: allocated {alloc}, reserved {reserved}",
                          "cuda:{index}：已分配 {alloc}，已保留 {reserved}"),
    "report.mmap_label": W("still mapped from the file", "仍映射自文件"),
    "report.vram_label": W("VRAM", "显存"),
    "report.chat": W("chat template", "聊天模板"),
    "report.chat_yes": W("the tokenizer has one: generation applies it by default (the switch under the prompt)",
                         "分词器带有聊天模板：生成时默认套用（开关在提示词下方）"),
    # the timeline
    "timeline.x": W("seconds", "秒"),
    "timeline.cut": W("{idle} idle, drawn as {drawn} s", "空闲 {idle}，这里画成 {drawn} 秒"),
    "timeline.y": W("process RSS (MiB)", "进程 RSS（MiB）"),
    "timeline.color": W("phase", "阶段"),
    "timeline.samples": W("{time} ({n} samples)", "{time}（{n} 个采样）"),
}
