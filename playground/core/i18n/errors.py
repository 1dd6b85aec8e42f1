"""Errors a visitor can cause, and the memory check's refusal: what was wrong and what to do."""

from playground.core.i18n.words import W

TEXT: dict[str, W] = {
    "err.unicode": W(
        "The {what} contains invalid Unicode (an unpaired surrogate, U+{code}, at character {at:,}). Paste "
        "plain text.",
        "{what_zh}含有无效的 Unicode（第 {at:,} 个字符处有一个不成对的代理项 U+{code}）"
        "。请粘贴纯文本。",
    ),
    "err.prompt_type": W("The prompt must be text.", "提示词必须是文本。"),
    "err.prompt_long": W(
        "The prompt is {n:,} characters; the limit is {limit:,} (PLAYGROUND_MAX_PROMPT_CHARS). Shorten it "
        "(the models here have short contexts anyway).",
        "提示词有 {n:,} 个字符，"
        "上限是 {limit:,}（PLAYGROUND_MAX_PROMPT_CHARS）。"
        "请缩短它（这里的模型上下文本来就很短）。",
    ),
    "err.prompt_empty": W(
        "The prompt is empty. Type a few words for the model to continue, e.g. 'ROMEO:'.",
        "提示词是空的。输入几个词让模型续写，例如 'ROMEO:'。",
    ),
    "err.prompt_nul": W(
        "The prompt contains NUL bytes (binary data). Paste plain text.",
        "提示词含有 NUL 字节（二进制数据）。请粘贴纯文本。",
    ),
    "err.diag_type": W("Paste the error as text: a traceback or its last line.", "请以文本形式粘贴错误：一段 traceback 或它的最后一行。"),
    "err.diag_long": W(
        "The pasted text is {n:,} characters; the limit is {limit:,} (PLAYGROUND_MAX_DIAGNOSE_CHARS). Paste "
        "the traceback's last lines: the error is at the end.",
        "粘贴的文本有 {n:,} 个字符，"
        "上限是 {limit:,}（PLAYGROUND_MAX_DIAGNOSE_CHARS）。"
        "请只粘贴 traceback 的最后几行：错误在末尾。",
    ),
    "err.diag_empty": W(
        "Nothing to diagnose: paste a traceback or an error line, e.g. the last line of the error.",
        "没有可诊断的内容：请粘贴一段 traceback 或一行错误信息，例如错误的最后一行。",
    ),
    "err.temperature": W(
        "temperature must be between 0 (greedy) and 5; got {got}.",
        "temperature 必须在 0（贪心）到 5 之间；收到的是 {got}。",
    ),
    "err.top_p": W(
        "top_p must be in (0, 1]: the share of probability mass to sample from; got {got}.",
        "top_p 必须在 (0, 1] 之内：即从多大比例的概率质量中采样；收到的是 {got}。",
    ),
    "err.whole": W(
        "{name} must be a whole number from {lo} to {hi}; got {got}.",
        "{name} 必须是 {lo} 到 {hi} 之间的整数；收到的是 {got}。",
    ),
    "err.number": W("{name} must be a number; got {got}.", "{name} 必须是数字；收到的是 {got}。"),
    "err.finite": W("{name} must be a finite number; got {got}.", "{name} 必须是有限的数字；收到的是 {got}。"),
    "err.model_none": W(
        "No model given. Pick one from the list; '{bundled}' works offline.",
        "没有指定模型。请从列表中选一个；'{bundled}' 可以离线使用。",
    ),
    "err.model_long": W(
        "That model name is too long. Use a Hub id (owner/name) or a local folder path.",
        "模型名太长了。请使用 Hub id（owner/name）或本地文件夹路径。",
    ),
    "err.model_url": W(
        "URLs are not accepted ({host}). Give a Hugging Face Hub id such as 'gpt2', or a local folder; "
        "'{bundled}' works offline.",
        "不接受网址（{host}）。请给出 Hugging Face Hub id，例如 'gpt2'，"
        "或一个本地文件夹；'{bundled}' 可以离线使用。",
    ),
    "err.model_name": W(
        "{model} is neither a Hub id (owner/name, letters, digits, '-', '_', '.') nor a local folder. Try "
        "'{bundled}', which works offline.",
        "{model} 既不是 Hub id（owner/name，只含字母、数字、'-'、'_'、'.'），"
        "也不是本地文件夹。试试 '{bundled}'，它可以离线使用。",
    ),
    "err.path_bad": W("{model} is not a usable path.", "{model} 不是可用的路径。"),
    "err.path_outside": W(
        "{model} is outside the folders the playground may read: the bundled models folder, the Hugging Face "
        "cache, the synthetic models folder, and folders listed in PLAYGROUND_MODEL_DIRS. Put the model "
        "under one of them, or add its parent folder to the PLAYGROUND_MODEL_DIRS environment variable.",
        "{model} 不在 playground 允许读取的文件夹内：内置模型文件夹、Hugging Face 缓存、合成模型文件夹，"
        "以及 PLAYGROUND_MODEL_DIRS 中列出的文件夹。请把模型放到其中之一下面，"
        "或把它的上级文件夹加入环境变量 PLAYGROUND_MODEL_DIRS。",
    ),
    "err.path_missing": W(
        "The folder {model} does not exist. Check the path, or pick '{bundled}'.",
        "文件夹 {model} 不存在。请检查路径，或选择 '{bundled}'。",
    ),
    "err.path_file": W(
        "{model} is a file; give the folder that holds config.json and the weights.",
        "{model} 是一个文件；请给出存放 config.json 和权重的文件夹。",
    ),
    "err.no_config": W("'{name}' holds no model: config.json is missing.", "'{name}' 里没有模型：缺少 config.json。"),
    "err.pickle_only": W(
        "'{name}' has only pickle weights (.bin/.pt). The playground loads safetensors only, because "
        "unpickling can run arbitrary code. Convert it with save_pretrained(safe_serialization=True).",
        "'{name}' 只有 pickle 格式的权重（.bin/.pt）。"
        "playground 只加载 safetensors，因为反序列化 pickle 可能执行任意代码。"
        "请用 save_pretrained(safe_serialization=True) 转换。",
    ),
    "err.no_weights": W("'{name}' has no .safetensors weights.", "'{name}' 里没有 .safetensors 权重。"),
    "err.st_unreadable": W(
        "'{name}' is not a readable safetensors file (a truncated or damaged download?). Download or save it "
        "again.",
        "'{name}' 不是可读的 safetensors 文件（下载不完整或已损坏？）。请重新下载或保存。",
    ),
    "err.st_truncated": W(
        "'{name}' is truncated: its header describes {want}, the file holds {have}. Download or save it "
        "again.",
        "'{name}' 不完整：它的文件头描述了 {want}，而文件只有 {have}。请重新下载或保存。",
    ),
    "err.hub_offline": W(
        "'{ref}' is not in the local Hugging Face cache and the Hub is unreachable ({why}). Offline, pick "
        "'{bundled}', the bundled model.",
        "'{ref}' 不在本地 Hugging Face 缓存中，而且连不上 Hub（{why}）。"
        "离线时请选择内置模型 '{bundled}'。",
    ),
    "err.not_causal": W(
        "'{name}' is not a causal language model Transformers knows (model_type '{model_type}').",
        "'{name}' 不是 Transformers 认识的因果语言模型（model_type '{model_ty"
        "pe}'）。",
    ),
    "err.hub_missing": W(
        "'{ref}' was not found on the Hugging Face Hub. Check the spelling (owner/name).",
        "在 Hugging Face Hub 上找不到 '{ref}'。请检查拼写（owner/name）。",
    ),
    "err.remote_code_hub": W(
        "'{ref}' needs custom code from the Hub (trust_remote_code), which the playground never runs.",
        "'{ref}' 需要来自 Hub 的自定义代码（trust_remote_code），"
        "playground 从不运行这类代码。",
    ),
    "err.remote_code": W(
        "'{name}' needs custom code (trust_remote_code), which the playground never runs.",
        "'{name}' 需要自定义代码（trust_remote_code），playground 从不运行这类代码。",
    ),
    "err.device_none": W("No device given. Pick one of: {usable}.", "没有指定设备。请从这些中选一个：{usable}。"),
    "err.device_name": W(
        "{device} is not a device name PyTorch knows. Use cpu, cuda:N, mps or auto. Available here: {usable}.",
        "{device} 不是 PyTorch 认识的设备名。请使用 cpu、cuda:N、mps 或 auto。"
        "这里可用的有：{usable}。",
    ),
    "err.device_absent": W(
        "Device {device} is not available here: {reason}. Available: {usable}.",
        "设备 {device} 在这里不可用：{reason}。可用的有：{usable}。",
    ),
    "err.dtype": W(
        "{dtype} is not a dtype the playground offers. Use one of: {dtypes} (auto keeps the checkpoint's own "
        "dtype).",
        "{dtype} 不是 playground 提供的数据类型。请从这些中选一个："
        "{dtypes}（auto 保留检查点自己的数据类型）。",
    ),
    "err.not_loaded": W(
        "No model is loaded yet. Press Load first (the bundled model works offline).",
        "还没有加载模型。请先点“加载”（内置模型可以离线使用）。",
    ),
    "err.unloaded": W("The model was unloaded. Press Load first.", "模型已被卸载。请先点“加载”。"),
    "err.no_tokens": W("The prompt produced no tokens. Type some text.", "提示词没有产生任何 token。请输入一些文字。"),
    "err.context": W(
        "The prompt is {n} tokens and max_new_tokens is {new}: {total} positions, but this model's context "
        "is {ctx}. Shorten the prompt or lower max_new_tokens to {room}.",
        "提示词有 {n} 个 token，max_new_tokens 是 {new}：共 {total} 个位置，"
        "但这个模型的上下文只有 {ctx}。请缩短提示词，或把 max_new_tokens 降到 {room}。",
    ),
    "est.where.system": W("available system RAM (psutil)", "系统可用内存（psutil）"),
    "est.where.budget": W(
        "{env}={value} (caps the {system} the system has available)",
        "{env}={value}（限制了系统可用的 {system}）",
    ),
    "est.where.frees": W("{where}, plus {frees} the loaded model frees first", "{where}，另加当前模型会先释放的 {frees}"),
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
        "需要 {need}（权重 + {margin} 余量）；所有 GPU 和内存加起来只有 {pool} 空闲",
    ),
    "est.reason.cuda": W(
        "needs {need} of RAM while loading ({avail} available, {where}) and {vram} on {device} ({free} free)",
        "加载时需要 {need} 内存（可用 {avail}，{where}），"
        "并需要 {device} 上的 {vram}（空闲 {free}）",
    ),
    "est.reason.ram": W(
        "needs {need} (weights {weights} + {margin} margin); {avail} available ({where})",
        "需要 {need}（权重 {weights} + {margin} 余量）；"
        "可用只有 {avail}（{where}）",
    ),
    "est.refuse": W(
        "Not loading {model} in {dtype} on {device}: it {reason}. The margin covers activations and the KV "
        "cache (Accelerate's documented ~20%).",
        "不加载 {model}（{dtype}，{device}）：它{reason}。"
        "余量用于激活值和 KV 缓存（Accelerate 文档给出的约 20%）。",
    ),
    "est.refuse.note": W(" ({note}.)", "（{note}。）"),
    "est.refuse.try": W(" Try: {tips}.", "可以试试：{tips}。"),
    "est.sep": W("; ", "；"),
    "est.tip.dtype": W("{dtype} would need {need}", "{dtype} 需要 {need}"),
    "est.tip.auto": W("device 'auto' spreads the layers over the GPUs and the CPU", "设备选 'auto' 会把各层分布到 GPU 和 CPU 上"),
    "est.tip.smaller": W("pick a smaller model (a smaller dtype would not fit either)", "换一个更小的模型（更小的数据类型也放不下）"),
    # the server's folders, named by role instead of by path
    "path.bundled": W("the bundled models folder", "内置模型文件夹"),
    "path.synthetic": W("the synthetic models folder (PLAYGROUND_SYNTHETIC_DIR)", "合成模型文件夹（PLAYGROUND_SYNTHETIC_DIR）"),
    "path.hf_cache": W("the Hugging Face cache", "Hugging Face 缓存"),
    "path.model_dirs": W("a folder listed in PLAYGROUND_MODEL_DIRS", "PLAYGROUND_MODEL_DIRS 中列出的文件夹"),
    "path.package": W("the playground's package", "playground 的程序包"),
    "path.repo": W("the playground's folder", "playground 的文件夹"),
    "path.tmp": W("a temporary folder", "临时文件夹"),
    "path.home": W("the server's home folder", "服务器的主目录"),
}
