"""Errors a visitor can cause, what was wrong and what to do; the server's folders by role."""

from playground.core.i18n.words import W

PREFIXES = ("err", "path")

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
    "err.no_tokens": W("The prompt produced no tokens. Type some text.", "提示词没有产生任何 token。请输入一些文字。"),
    "err.context_memory": W(
        "A context of {tokens} tokens would not fit in memory on {device}: it needs {need} (weights {weights}, "
        "KV cache {kv}, activation peak {act}, {how}) and {free} is free there. The longest that fits is {top} tokens: "
        "shorten the prompt or lower max_new_tokens (the estimate panel's 'Will it fit?' shows each device).",
        "{tokens} 个 token 的上下文在 {device} 上放不下：需要 {need}（权重 {weights}，KV 缓存 {kv}，激活峰值 {act}，{how}），"
        "而那里空闲 {free}。能放下的最长上下文是 {top} 个 token：请缩短提示词或降低 max_new_tokens"
        "（估算面板的“放得下吗？”会列出每个设备）。",
    ),
    "err.context": W(
        "The prompt is {n} tokens and max_new_tokens is {new}: {total} positions, but this model's context "
        "is {ctx}. Shorten the prompt or lower max_new_tokens to {left}.",
        "提示词有 {n} 个 token，max_new_tokens 是 {new}：共 {total} 个位置，"
        "但这个模型的上下文只有 {ctx}。请缩短提示词，或把 max_new_tokens 降到 {left}。",
    ),
    # the server's folders, named by role instead of by path
    "path.bundled": W("the bundled models folder", "内置模型文件夹"),
    "path.synthetic": W("the synthetic models folder (PLAYGROUND_SYNTHETIC_DIR)", "合成模型文件夹（PLAYGROUND_SYNTHETIC_DIR）"),
    "path.hf_cache": W("the Hugging Face cache", "Hugging Face 缓存"),
    "path.model_dirs": W("a folder listed in PLAYGROUND_MODEL_DIRS", "PLAYGROUND_MODEL_DIRS 中列出的文件夹"),
    "path.package": W("the playground's package", "playground 的程序包"),
    "path.repo": W("the playground's folder", "playground 的文件夹"),
    "path.tmp": W("a temporary folder", "临时文件夹"),
    "path.home": W("the server's home folder", "服务器的主目录"),
    "err.st_missing": W("'{name}' is missing. Download or save it again.", "'{name}' 不存在。请重新下载或保存。"),
    "err.no_tokenizer": W(
        "'{name}' has no tokenizer (none of {files}...). Save the tokenizer next to the model "
        "(tokenizer.save_pretrained).",
        "'{name}' 没有分词器（{files}... 都不存在）。请把分词器保存在模型旁边（tokenizer.save_pretrained）。",
    ),
    # a build that cannot be done: what is wrong, with the folder by role, and what to do
    "err.disk_full": W(
        "Not enough disk space to build {name} in {folder}: it needs {need}, {free} is free. Nothing was "
        "unloaded. Free some space there, or point PLAYGROUND_SYNTHETIC_DIR at a disk with room.",
        "磁盘空间不足，无法在{folder}中生成 {name}：需要 {need}，只剩 {free}。"
        "没有卸载任何模型。请在那里腾出空间，或把 PLAYGROUND_SYNTHETIC_DIR 指向空间足够的磁盘。",
    ),
    "err.file_limit": W(
        "Could not build {name} in {folder}: the server's file-size limit (ulimit -f) stopped it from "
        "writing {file} ({need} needed). Nothing was unloaded. Raise the limit for the server's process.",
        "无法在{folder}中生成 {name}：服务器进程的文件大小上限（ulimit -f）使它无法写入 {file}"
        "（需要 {need}）。没有卸载任何模型。请提高服务器进程的这个上限。",
    ),
    "err.read_only": W(
        "Could not build {name}: {folder} is read-only here. Nothing was unloaded. Make it writable, or point "
        "PLAYGROUND_SYNTHETIC_DIR at a writable folder.",
        "无法生成 {name}：{folder}在这里是只读的。没有卸载任何模型。"
        "请让它可写，或把 PLAYGROUND_SYNTHETIC_DIR 指向一个可写的文件夹。",
    ),
    "err.damaged_rebuild": W(
        "{name}'s checkpoint is damaged ({why}), and rebuilding it failed. {error}",
        "{name} 的检查点已损坏（{why}），重新生成也失败了。{error}",
    ),
    # a load that failed after the model before it was freed
    "err.restored": W(
        "{error} It failed after the model before it was freed: that model, {previous} ({device}, {dtype}), "
        "was loaded back and keeps serving.",
        "{error} 失败发生在之前的模型被释放之后：之前的模型 {previous}（{device}，{dtype}）已重新加载，继续提供服务。",
    ),
    "err.restore_failed": W(
        "{error} It failed after the model before it was freed, and loading that model, {previous}, back "
        "failed too ({again}). No model is loaded: press Load.",
        "{error} 失败发生在之前的模型被释放之后，而把那个模型 {previous} 重新加载也失败了（{again}）。"
        "现在没有加载任何模型：请点“加载”。",
    ),
    "err.closing": W(
        "The server is shutting down; nothing new starts now. Try again in a minute.",
        "服务器正在关闭，现在不再开始新的任务。请过一分钟再试。",
    ),
    # errors of the Hub path
    "err.hub_gated": W(
        "'{ref}' is gated on the Hugging Face Hub: it needs an accepted licence and a token, which the "
        "playground does not send. Pick another model.",
        "'{ref}' 在 Hugging Face Hub 上是受限模型：需要先同意许可并提供 token，"
        "playground 不会发送 token。请换一个模型。",
    ),
    "err.hub_download": W(
        "The download of '{ref}' failed ({error}). The model already loaded is untouched; try again, or pick "
        "'{bundled}', the bundled model.",
        "'{ref}' 下载失败（{error}）。已加载的模型没有受到影响；请重试，或选择内置模型 '{bundled}'。",
    ),
    "err.not_cached": W(
        "'{ref}' has no config.json in the local Hugging Face cache, and the estimate never goes to the "
        "network. Load it once (with network) or pick a bundled or synthetic model.",
        "本地 Hugging Face 缓存里没有 '{ref}' 的 config.json，而估算从不联网。"
        "请先（联网）加载一次，或选择内置模型或合成模型。",
    ),
    "err.config_unreadable": W("Cannot read the config of '{name}': {error}", "无法读取 '{name}' 的配置：{error}"),
    "err.load_hub": W("Could not load '{ref}' from the Hub: {error}", "无法从 Hub 加载 '{ref}'：{error}"),
    "err.load_failed": W("Could not load '{name}': {error}", "无法加载 '{name}'：{error}"),
    "err.prompt_fills_context": W(
        "The prompt is {n} tokens and this model's context is {ctx}: it leaves no room for a new token. "
        "Shorten the prompt.",
        "提示词有 {n} 个 token，而这个模型的上下文只有 {ctx}：已经没有生成新 token 的空间。请缩短提示词。",
    ),
    "err.flag": W("{name} must be true or false; got {got}.", "{name} 必须是 true 或 false；收到的是 {got}。"),
    "err.engine": W("Unknown engine {engine}; use one of {engines}.", "未知的生成引擎 {engine}；请从这些中选一个：{engines}。"),
    # what a visitor can send that the playground refuses (the English is what the API and the CLI say)
    "err.synthetic_off": W("{name} is not available here: synthetic models are switched off ({why}).",
                           "{name} 在这里不可用：合成模型已关闭（{why}）。"),
    "err.synthetic_big": W(
        "{name} is too large for this playground ({why}). Pick one of: {names}; run the playground on your own "
        "machine for the larger ones.",
        "{name} 对这个 playground 来说太大了（{why}）。请从这些中选：{names}；更大的模型请在你自己的机器上运行 playground。",
    ),
    "err.synthetic_big_space": W(
        "{name} is too large for this shared Space ({why}). Pick one of: {names}; run the playground on your own "
        "machine for the larger ones.",
        "{name} 对这个共享的 Space 来说太大了（{why}）。请从这些中选：{names}；更大的模型请在你自己的机器上运行 playground。",
    ),
    "err.synthetic_name": W("'{name}' is not a synthetic model. Known: {known}.",
                            "'{name}' 不是合成模型。已知的有：{known}。"),
    "err.auto_dtype": W("'{name}' resolves to {dtype} under auto; pick float32, float16 or bfloat16.",
                        "在 auto 下 '{name}' 的数据类型是 {dtype}；请选 float32、float16 或 bfloat16。"),
    "err.config_json": W("'{name}/config.json' is not valid JSON ({error}). Re-save the model.",
                         "'{name}/config.json' 不是有效的 JSON（{error}）。请重新保存模型。"),
    "err.lab_model": W("The lab needs a Transformers causal language model. Load one first, or use the bundled model.",
                       "实验室需要一个 Transformers 因果语言模型。请先加载一个，或使用内置模型。"),
    "err.lab_blocks": W("This model has no list of transformer blocks the lab recognises; use the bundled model.",
                        "这个模型没有实验室认得的 Transformer 块列表；请使用内置模型。"),
    "err.mistake": W("Unknown mistake {got}. Pick one of: {known}.", "未知的错误类型 {got}。请从这些中选：{known}。"),
    "err.claim": W("Unknown claim {got}. Pick one of: {known}.", "未知的说法 {got}。请从这些中选：{known}。"),
    "err.inspect_model": W("Inspect needs a loaded model (a torch.nn.Module). Load a model first.",
                           "检查需要一个已加载的模型（torch.nn.Module）。请先加载模型。"),
    "err.pairs_none": W("No pairs to compare. Give a list like ['cpu/float32', 'cpu/bfloat16'].",
                        "没有要对比的组合。请给出一个列表，例如 ['cpu/float32', 'cpu/bfloat16']。"),
    "err.pairs_many": W("{n} pairs asked for; the limit is {cap} (PLAYGROUND_MAX_COMPARE_PAIRS). Untick some.",
                        "要求了 {n} 个组合；上限是 {cap}（PLAYGROUND_MAX_COMPARE_PAIRS）。请取消勾选一些。"),
    "err.pair": W("{got} is not a pair. Write device/dtype, e.g. cpu/bfloat16 or cuda:0/float16.",
                  "{got} 不是一个组合。请写成 设备/数据类型，例如 cpu/bfloat16 或 cuda:0/float16。"),
    "err.engine_tokens": W(
        "max_new_tokens for the engines must be a whole number from {lo} to {hi}; got {got}. (The loop without "
        "a cache recomputes the whole sequence every step: longer runs take minutes.)",
        "引擎的 max_new_tokens 必须是 {lo} 到 {hi} 之间的整数；收到的是 {got}。（不带缓存的循环每一步都要重算整个序列：更长的运行要花几分钟。）",
    ),
    "err.compiled_split": W(
        "The compiled engine needs the whole model on one device; this one is split over {devices} "
        "(device_map='auto'). Load it on one device to compile it.",
        "编译引擎需要整个模型位于同一个设备上；这个模型分布在 {devices} 上（device_map='auto'）。请把它加载到单个设备上再编译。",
    ),
    "err.compile_failed": W(
        "torch.compile could not compile the decode step here ({error}). The other engines' figures stand.",
        "torch.compile 在这里无法编译解码步骤（{error}）。其他引擎的结果仍然有效。",
    ),
    "err.zerogpu_speed": W(
        "On ZeroGPU the GPU exists only inside a @spaces.GPU call, so a timing of {device} taken here would time an "
        "emulation. Load the model on cpu to measure it here.",
        "在 ZeroGPU 上，GPU 只在 @spaces.GPU 调用内部存在，所以在这里对 {device} 计时只会测到模拟。请把模型加载到 cpu 上再测量。",
    ),
}
