"""The real-model path: a Hub model's download, the loader's progress, chat templates, limits, the catalog."""

from playground.core.i18n.words import W

TEXT: dict[str, W] = {
    # the loader's progress (shown over the report while it runs; the English text starts with the
    # phase it begins, which marks the memory timeline: playground.hw.sampler.PROGRESS_PHASES)
    "progress.download_check": W("download: is '{ref}' in the Hugging Face cache?",
                                 "下载：'{ref}' 在 Hugging Face 缓存里吗？"),
    "progress.download": W("download: {ref}, {done} of {total}", "下载：{ref}，已下载 {done} / {total}"),
    "progress.downloaded": W("download: {ref} is here; checking its safetensors files",
                             "下载：{ref} 已就绪；正在检查它的 safetensors 文件"),
    "progress.estimate": W("estimate: does it fit? (built on the meta device)", "估算：放得下吗？（在 meta 设备上构建）"),
    "progress.tokenizer": W("tokenizer: AutoTokenizer.from_pretrained", "分词器：AutoTokenizer.from_pretrained"),
    "progress.import": W("import: the architecture's Python code (first load only)",
                         "导入：这个架构的 Python 代码（只在第一次加载时）"),
    "progress.load": W("load: from_pretrained (disk to RAM)", "加载：from_pretrained（磁盘 → 内存）"),
    "progress.load_auto": W("load: from_pretrained(device_map='auto')", "加载：from_pretrained(device_map='auto')"),
    "progress.migrate": W("migrate: model.to('{device}')", "迁移：model.to('{device}')"),
    "progress.eval": W("model.eval(): dropout off", "model.eval()：关闭 dropout"),
    "progress.loaded": W("loaded", "已加载"),
    # the download phase's note in the load report
    "phase.download": W("downloaded {bytes} ({files} files) from the Hub at {rate} into the Hugging Face cache",
                        "从 Hub 下载了 {bytes}（{files} 个文件），速度 {rate}，存入 Hugging Face 缓存"),
    "phase.download_cached": W("from the cache: 0 bytes downloaded ({files} files already in the Hugging Face cache)",
                               "来自缓存：下载 0 字节（{files} 个文件已在 Hugging Face 缓存中）"),
    "report.download": W("the Hub's files into the Hugging Face cache (only those a causal LM needs)",
                         "把 Hub 上的文件下载到 Hugging Face 缓存（只下载因果语言模型需要的文件）"),
    # why the Hub cannot be reached (a field of err.hub_offline)
    "hub.offline_set": W("HF_HUB_OFFLINE is set", "设置了 HF_HUB_OFFLINE"),
    "hub.unreachable": W("cannot reach {url} ({error})", "连不上 {url}（{error}）"),
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
    "err.lab_blocks": W("This model has no list of transformer blocks the lab recognises; use the bundled model.",
                        "这个模型没有实验室认得的 Transformer 块列表；请使用内置模型。"),
    "err.mistake": W("Unknown mistake {got}. Pick one of: {known}.", "未知的错误类型 {got}。请从这些中选：{known}。"),
    "err.pairs_none": W("No pairs to compare. Give a list like ['cpu/float32', 'cpu/bfloat16'].",
                        "没有要对比的组合。请给出一个列表，例如 ['cpu/float32', 'cpu/bfloat16']。"),
    "err.pairs_many": W("{n} pairs asked for; the limit is {cap} (PLAYGROUND_MAX_COMPARE_PAIRS). Untick some.",
                        "要求了 {n} 个组合；上限是 {cap}（PLAYGROUND_MAX_COMPARE_PAIRS）。请取消勾选一些。"),
    "err.pair": W("{got} is not a pair. Write device/dtype, e.g. cpu/bfloat16 or cuda:0/float16.",
                  "{got} 不是一个组合。请写成 设备/数据类型，例如 cpu/bfloat16 或 cuda:0/float16。"),
    # the model picker
    "catalog.bundled": W("{name} (bundled, works offline)", "{name}（内置，无需联网）"),
    "catalog.hub": W("{name} (Hugging Face Hub)", "{name}（Hugging Face Hub）"),
    "catalog.synthetic": W("{name} ({shape} shape, random weights)", "{name}（{shape} 的形状，随机权重）"),
    # chat templates
    "page.chat": W("Apply the chat template", "套用聊天模板"),
    "page.chat.info": W(
        "When the tokenizer has one (instruct models), the prompt is sent as the user's message through "
        "tokenizer.apply_chat_template(..., add_generation_prompt=True). Untick to send the raw prompt.",
        "当分词器带有聊天模板时（instruct 模型），提示词会作为用户消息，经 "
        "tokenizer.apply_chat_template(..., add_generation_prompt=True) 送入模型。取消勾选则发送原始提示词。",
    ),
    "stats.chat_applied": W("chat template applied: the prompt went in as the user's message",
                            "已套用聊天模板：提示词作为用户消息送入"),
    "stats.chat_raw": W("raw prompt: the tokenizer's chat template was not applied",
                        "原始提示词：没有套用分词器的聊天模板"),
    "page.context": W("context: {ctx} tokens; the prompt takes {n}, leaving {room}",
                      "上下文：{ctx} 个 token；提示词占 {n} 个，还剩 {room} 个"),
    "page.context.unknown": W("context: {ctx} tokens, prompt included", "上下文：{ctx} 个 token（含提示词）"),
}
