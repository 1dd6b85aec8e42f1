"""The page: its title, tabs, labels, buttons and the status line."""

from playground.core.i18n.words import W

PREFIXES = ("page", "status", "punct")

TEXT: dict[str, W] = {
    "page.title": W("The device playground", "设备游乐场"),
    "page.intro": W(
        "Pick a model, a device and a dtype, press **Load**, and see what PyTorch does, measured on this "
        "machine: how long `from_pretrained` takes to build the model from the checkpoint on disk, and *separately* how long "
        "`model.to(device)` takes to move them; what that costs in RAM and VRAM; then watch tokens stream in "
        "with live tokens/s. Flip **Break it** to see the real error each classic mistake raises.",
        "选择模型、设备和数据类型，点击**加载**，看看 PyTorch 实际做了什么，全部在这台机器上实测："
        "`from_pretrained` 用磁盘上的检查点构建模型用了多久，"
        "以及*单独*计时的 `model.to(device)` 搬运权重用了多久；它们占用多少内存和显存；"
        "然后看文本逐个 token 流式生成，实时显示 tokens/s。打开**搞坏它**，"
        "看看每个经典错误真正抛出的报错。",
    ),
    # Gradio's progress overlay writes these two in English whatever the page's language (web/style.py's SCRIPT)
    "page.gradio.queue": W("queue:", "排队："),
    "page.gradio.processing": W("processing", "处理中"),
    "page.lang": W("Language / 语言", "Language / 语言"),
    "page.tab.play": W("Playground", "游乐场"),
    "page.tab.inspect": W("Inspect", "检查张量位置"),
    "page.tab.diagnose": W("Diagnose an error", "诊断报错"),
    "page.model": W("Model", "模型"),
    "page.model.info": W(
        "Pick one, or type a Hub id (owner/name) or a local folder.",
        "从列表中选择，或输入 Hub id（owner/name）或本地文件夹。",
    ),
    "page.device": W("Device", "设备"),
    "page.dtype": W("dtype", "数据类型"),
    "page.load": W("Load", "加载"),
    "page.devices": W("Devices on this machine", "本机的设备"),
    "page.report.empty": W("Press **Load** to see each phase timed and measured.", "点击**加载**，查看每个阶段的计时和测量结果。"),
    "page.report.json": W("Raw load report (JSON)", "原始加载报告（JSON）"),
    "page.generate.title": W("## Generate", "## 生成"),
    "page.prompt": W("Prompt", "提示词"),
    "page.max_new": W("max_new_tokens", "max_new_tokens（最多生成的 token 数）"),
    "page.temperature": W("temperature (0 = greedy)", "temperature（0 = 贪心解码）"),
    "page.top_p": W("top_p", "top_p"),
    "page.seed": W("seed", "随机种子"),
    "page.generate": W("Generate", "生成"),
    "page.run_mistake": W("Run the mistake", "运行这个错误"),  # the run button while Break it is ticked
    "page.stop": W("Stop", "停止"),
    "page.output": W("Output", "输出"),
    "page.breakit": W("Break it", "搞坏它"),
    "page.breakit.info": W(
        "Run the loaded model through the pipeline with one classic mistake, and see what PyTorch raises.",
        "让已加载的模型走一遍只犯了一个经典错误的流程，看看 PyTorch 抛出什么。",
    ),
    "page.mistake": W("Mistake", "错误类型"),
    "page.snippet": W("The code to copy: this run, in plain Transformers", "可复制的代码：用纯 Transformers 复现这次运行"),
    "page.inspect.intro": W(
        "Where does every tensor live? One row per module, with its device(s), dtype(s), parameters and "
        "bytes.",
        "每个张量都在哪里？每个模块一行，列出设备、数据类型、参数量和字节数。",
    ),
    "page.inspect.loaded": W("Inspect the loaded model", "检查已加载的模型"),
    "page.inspect.half": W("Inspect a half-moved model (mistake 3)", "检查只搬了一半的模型（错误 3）"),
    "page.diagnose.intro": W(
        "Paste a traceback or an error line: the playground names the mistake, explains it and shows the fix.",
        "粘贴一段 traceback 或一行报错：游乐场会指出是哪种错误，解释原因并给出修复方法。",
    ),
    "page.diagnose.box": W("Traceback or error message", "Traceback 或报错信息"),
    "page.diagnose.run": W("Diagnose", "诊断"),
    "page.diagnose.open": W("Run mistake {number} in the lab: {title}", "在实验室中运行第 {number} 个错误：{title}"),
    "status.none": W(
        "**Your model:** none yet. Press **Load** (the bundled model works offline).",
        "**你的模型**：还没有。点击**加载**（内置模型无需联网）。",
    ),
    "status.loaded": W(
        "**Your model:** `{model}` on `{device}` in `{dtype}`",
        "**你的模型**：`{model}`，设备 `{device}`，数据类型 `{dtype}`",
    ),
    "status.became": W(" (placed on {became})", "（放在 {became}）"),
    "status.ram": W(", {ram} of it in RAM", "，其中 {ram} 在内存里"),
    "status.gone": W(
        "**Your model:** `{model}` ({device}, {dtype}) was unloaded at {at} to make room for another visitor's. "
        "Press **Load** to load it again (about {seconds} s).",
        "**你的模型**：`{model}`（{device}，{dtype}）已在 {at} 被卸载，为另一位访客的模型腾出内存。"
        "点击**加载**重新加载（大约 {seconds} 秒）。",
    ),
    "status.pool": W(
        "**This server holds** {models} {models?model|models} for {visitors} {visitors?visitor|visitors} ({bytes} of RAM).",
        "**本服务器**为 {visitors} 位访客保留着 {models} 个模型（占内存 {bytes}）。",
    ),
    "page.engine": W("Generation engine", "生成引擎"),
    "page.engine.info": W(
        "generate(), or the tutorials' manual loop: prefill once, then one token at a time with the KV cache "
        "(or without it)",
        "generate()，或教程里的手写循环：先一次预填充（prefill），"
        "再带着 KV 缓存逐个 token 解码（或不带缓存）",
    ),
    "page.estimate": W("Estimate before loading", "加载前估算"),
    "page.tab.compare": W("Compare", "对比"),
    "page.compare.intro": W(
        "Run every (device, dtype) pair through load, migrate, one prompt and a fixed number of greedy "
        "tokens. The pairs are loaded beside the models loaded for visitors, within the memory they leave: "
        "none of them is unloaded.",
        "让每个（设备，数据类型）组合都走一遍：加载、迁移、同一个提示词、固定数量的贪心 token。"
        "这些组合与为访客加载的模型同时存在，只使用它们剩下的内存：不会卸载其中任何一个。",
    ),
    "page.compare.pairs": W("Pairs to run", "要运行的组合"),
    "page.compare.tokens": W("greedy tokens per run", "每次运行的贪心 token 数"),
    "page.compare.run": W("Run the matrix", "运行对比"),
    "page.compare.stop": W("Stop after this run", "这次运行后停止"),
    "page.compare.files": W("Download the table", "下载表格"),
    "page.tab.factcheck": W("Fact-check", "事实核查"),
    "page.factcheck.intro": W(
        "### The tutorials, checked\nEach claim is quoted from the Chinese tutorials this playground grew from, "
        "and decided by an experiment that runs here when you press a button: the verdict follows what it finds. "
        "Claims only a GPU can decide say what a GPU would show.",
        "### 核查教程\n每条说法都引自本游乐场所依据的中文教程，按下按钮时在这里运行实验来判定："
        "结论由实验结果决定。只有 GPU 才能判定的说法，会说明在 GPU 上会看到什么。",
    ),
    "page.factcheck.pick": W("Claim", "说法"),
    "page.factcheck.one": W("Check this claim", "核查这条说法"),
    "page.factcheck.all": W("Check all claims", "核查全部说法"),
    # chat templates
    "page.chat": W("Apply the chat template", "套用聊天模板"),
    "page.chat.info": W(
        "When the tokenizer has one (instruct models), the prompt is sent as the user's message through "
        "tokenizer.apply_chat_template(..., add_generation_prompt=True). Untick to send the raw prompt.",
        "当分词器带有聊天模板时（instruct 模型），提示词会作为用户消息，经 "
        "tokenizer.apply_chat_template(..., add_generation_prompt=True) 送入模型。取消勾选则发送原始提示词。",
    ),
    "page.context": W("context: {ctx} tokens; the prompt takes {n}, leaving {left}",
                      "上下文：{ctx} 个 token；提示词占 {n} 个，还剩 {left} 个"),
    "page.context.unknown": W("context: {ctx} tokens, prompt included", "上下文：{ctx} 个 token（含提示词）"),
    "page.decoding": W("Decoding", "解码方式"),
    "page.decoding.sampled": W("sampled (temperature 0.8, top_p 0.95, seed 0)",
                               "采样（temperature 0.8，top_p 0.95，随机种子 0）"),
    "page.decoding.greedy": W("greedy (temperature 0)", "贪心（temperature 0）"),
    "page.decoding.custom": W("your own settings", "自定义设置"),
    "page.snippet.none": W("# The code to copy appears here after a generation, for the engine that ran it.",
                           "# 生成之后，这里会出现可复制的代码（对应所用的生成引擎）。"),
    # a result made with another model than the one loaded now (after another Load): said, and greyed
    "page.stale": W("**Out of date:** these results are from {made}, before your load of {now}. "
                    "Generate (or run the mistake) again for the model loaded now.",
                    "**已过时**：以下结果来自 {made}，是你加载 {now} 之前的结果。"
                    "请重新生成（或重新运行错误示例），得到当前所加载模型的结果。"),
    "page.stale.gone": W("**Out of date:** these results are from {made}, which is no longer loaded. "
                         "Load a model and generate again.",
                         "**已过时**：以下结果来自 {made}，该模型已不再加载。请加载模型后重新生成。"),
    "page.stale.model": W("{model} on {device} in {dtype}", "{device} 上 {dtype} 的 {model}"),
    # a refused request: in its toast, and in the panel of the button that sent it (nothing else changes)
    "page.refused": W("**Refused:** {text}", "**已拒绝**：{text}"),
    # a label before what it labels, and an aside: each language's own punctuation (a Chinese label ends in a
    # full-width colon outside the bold, where Markdown can close the bold; an aside takes full-width brackets)
    "punct.labelled": W("**{label}:** {text}", "**{label}**：{text}"),
    "punct.labelled_plain": W("{label}: {text}", "{label}：{text}"),
    "punct.aside": W("{text} ({aside})", "{text}（{aside}）"),
    "punct.end": W("{text}.", "{text}。"),
    "punct.comma": W(", ", "，"),
    "punct.semicolon": W("; ", "；"),
}
