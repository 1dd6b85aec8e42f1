"""The guided path ("Start here"): its steps' titles and texts, the sentences its measurements choose, its labels."""

from playground.core.i18n.words import W

PREFIXES = ("lesson",)

TEXT: dict[str, W] = {
    # -- the tab ------------------------------------------------------------------------
    "lesson.tab": W("Start here", "从这里开始"),
    "lesson.intro": W(
        "Nine steps through five tutorials on `model.to(device)` (T1 to T5, listed under the path), in their order, "
        "then a tenth: what a dtype changes. Each step runs the real thing on "
        "**your** model (the one you loaded; the bundled one if you have none) and says what it measured, in a "
        "sentence chosen from the numbers. The link under each result opens the panel that goes deeper. The page "
        "remembers where you are.",
        "按五篇教程（T1 到 T5，列在路线下方）的顺序，用九步讲清 `model.to(device)`，第十步看数据类型改变了什么。每一步都在**你的**模型上实际运行（你加载的那个；"
        "还没加载时用内置模型），并用一句根据数字选出的话说明测到了什么。结果下面的链接会打开讲得更深的面板。"
        "页面会记住你走到了哪一步。"),
    "lesson.path": W("The path", "路线"),
    "lesson.tutorials.title": W("The five tutorials (T1 to T5)", "五篇教程（T1 到 T5）"),
    "lesson.tutorials": W(
        "Five Chinese blog posts on `model.to(DEVICE)`, which this path follows and corrects where they are wrong "
        "(the Fact-check tab tests claims quoted from them; the project's docs/lesson-map.md maps every point to the "
        "page):\n\n"
        "- **T1** “model.to(DEVICE) 详解：作用、后台过程与影响”: what `.to()` does, what it costs, what happens without it.\n"
        "- **T2** “模型重要方法详解：除了 generate 之外”: forward, eval/train, parameters, state_dict, the prefill and "
        "decode loop.\n"
        "- **T3** “.to(device)没写对引发的'血案'与最佳实践”: a night lost to a device mismatch, and best practices "
        "(DataLoader, loss, DataParallel, checkpoints, AMP).\n"
        "- **T4** “pytorch .to(device)用法和原理”: `.to(device)` in a training loop, with the optimizer.\n"
        "- **T5** “pytorch一些容易错的地方”: easy mistakes, and a summary table.",
        "五篇讲 `model.to(DEVICE)` 的中文博客，本路线按它们展开，并在它们说错的地方加以纠正（“事实核查”标签页实测检验从中引用的说法；"
        "项目文档 docs/lesson-map.md 把每个要点对应到页面上）：\n\n"
        "- **T1** “model.to(DEVICE) 详解：作用、后台过程与影响”：`.to()` 做什么、代价多大、不写会怎样。\n"
        "- **T2** “模型重要方法详解：除了 generate 之外”：forward、eval/train、parameters、state_dict，以及预填充与解码循环。\n"
        "- **T3** “.to(device)没写对引发的'血案'与最佳实践”：一次设备不匹配熬掉的夜晚，以及最佳实践"
        "（DataLoader、损失函数、DataParallel、检查点、AMP）。\n"
        "- **T4** “pytorch .to(device)用法和原理”：训练循环里的 `.to(device)`，以及优化器。\n"
        "- **T5** “pytorch一些容易错的地方”：一串容易犯的错误和一张总结表。"),
    "lesson.progress": W("Step {n} of {total}", "第 {n} 步，共 {total} 步"),
    "lesson.run": W("Run this step", "运行这一步"),
    "lesson.next": W("Next step →", "下一步 →"),
    "lesson.back": W("← Previous step", "← 上一步"),
    "lesson.deeper": W("Go deeper: {where}", "深入：{where}"),
    "lesson.running": W("Running on your model…", "正在你的模型上运行……"),
    "lesson.measured": W("Measured at {at} on {model} ({device}, {dtype}); the step took {took}:",
                         "{at} 在 {model}（{device}，{dtype}）上测得；这一步用时 {took}："),
    "lesson.measured.load": W("Measured by the load of {model} ({device}, {dtype}), which ended at {at}; this step "
                              "read that load's report:",
                              "由 {model}（{device}，{dtype}）的那次加载测得，加载结束于 {at}；这一步读取的是那次加载的报告："),
    "lesson.measured.placed": W("Measured at {at} on a second copy of the bundled model, loaded with limits; the step "
                                "took {took}:",
                                "{at} 在另一份按限制加载的内置模型上测得；这一步用时 {took}："),
    "lesson.col.figure": W("figure", "指标"),
    "lesson.col.value": W("value", "数值"),
    "lesson.yes": W("yes", "是"),
    "lesson.size.zero": W("0 bytes", "0 字节"),
    # what `.to()` did at load (the load report's migrate code), as the figures' table says it
    "lesson.migrate.noop": W("no-op", "空操作"),
    "lesson.migrate.copied": W("copied", "已复制"),
    "lesson.migrate.auto_hooks": W("placed by device_map, hooked", "由 device_map 放置，挂了钩子"),
    "lesson.migrate.auto_single": W("placed by device_map on one device", "由 device_map 放在一个设备上"),
    "lesson.no": W("no", "否"),
    "lesson.loaded_first": W("You had no model loaded, so this step loaded the bundled model ({model}, cpu, float32) first.",
                             "你还没有加载模型，所以这一步先加载了内置模型（{model}，cpu，float32）。"),
    "lesson.err.unknown": W("There is no step {step}. The steps are: {ids}.", "没有名为 {step} 的步骤。可用的步骤有：{ids}。"),
    # -- where each step goes deeper ---------------------------------------------------------
    "lesson.panel.report": W("Playground tab, the load report", "游乐场标签页的加载报告"),
    "lesson.panel.bw": W("Speed tab, copy bandwidth", "速度标签页的拷贝带宽"),
    "lesson.panel.inspect": W("Inspect tab", "检查张量位置标签页"),
    "lesson.panel.stats": W("Playground tab, Generate and its statistics", "游乐场标签页的生成与统计"),
    "lesson.panel.kv": W("Speed tab, the KV cache", "速度标签页的 KV 缓存"),
    "lesson.panel.lab": W("Playground tab, Break it", "游乐场标签页的“搞坏它”"),
    "lesson.panel.place": W("Placement tab, the placement map", "放置标签页的放置图"),
    "lesson.panel.engines": W("Speed tab, decode engines", "速度标签页的解码引擎"),
    "lesson.panel.compare": W("Compare tab, what the dtype changed", "对比标签页的“数据类型改变了什么”"),
    # -- the steps: a title and a few sentences each -------------------------------------------
    "lesson.load.title": W("1. Load, and what each phase did", "1. 加载，以及每个阶段做了什么"),
    "lesson.load.text": W(
        "Loading is several steps, and the tutorials' `model.to(DEVICE)` is only one of them. `from_pretrained` builds "
        "the model from the checkpoint (float32 weights are memory-mapped from the file, read from disk only as they "
        "are used; a cast copies them into RAM); `model.to(device)` moves them (on the CPU there is nowhere to move them); "
        "`eval()` switches dropout off. This step shows each phase of your model's load, timed apart.",
        "加载分好几步，教程里的 `model.to(DEVICE)` 只是其中一步。`from_pretrained` 用检查点构建模型（float32 权重直接内存映射到文件，用到时才从磁盘读入；转换数据类型时才复制进内存）；"
        "`model.to(device)` 移动它们（在 CPU 上无处可移）；`eval()` 关闭 dropout。这一步把你的模型加载时的"
        "每个阶段分开计时给你看。"),
    "lesson.to.title": W("2. `.to()` on this machine: what moved, in bytes", "2. 这台机器上的 `.to()`：移动了什么，多少字节"),
    "lesson.to.text": W(
        "The first tutorial (T1) says `.to()` copies every parameter and buffer to the device. It does so only when a "
        "tensor is not there yet: `Tensor.to` returns the tensor itself otherwise. This step calls `.to()` on each "
        "of your model's tensors, as `model.to()` does, and counts the ones that came back with a new `data_ptr` "
        "(a new copy): once to the CPU, once to another dtype, which is a real copy on any device.",
        "第一篇教程（T1）说 `.to()` 会把每个参数和缓冲区复制到设备上。其实只有张量还不在那里时才会复制，否则 "
        "`Tensor.to` 直接返回张量本身。这一步像 `model.to()` 那样对你模型的每个张量调用 `.to()`，统计返回时 "
        "`data_ptr` 变了（即新复制了一份）的张量：一次移到 CPU，一次转换成另一种数据类型，后者在任何设备上都会真的复制。"),
    "lesson.where.title": W("3. Where every tensor lives", "3. 每个张量在哪里"),
    "lesson.where.text": W(
        "`parameters()`, `named_parameters()`, `buffers()` and `state_dict()` list the same weights in different "
        "ways (the second tutorial, T2). This step reads the device and dtype of every tensor of your model and counts "
        "what each of the four lists.",
        "`parameters()`、`named_parameters()`、`buffers()` 和 `state_dict()` 用不同方式列出同一批权重"
        "（第二篇教程，T2）。这一步读取你模型每个张量的设备和数据类型，并统计这四种方法各列出多少项。"),
    "lesson.forward.title": W("4. A forward pass against `generate()`", "4. 一次前向传播与 `generate()`"),
    "lesson.forward.text": W(
        "`model(input_ids)` runs the network once and returns scores (logits) for the next token at every position; "
        "it writes no text. `generate()` is a loop around it: choose a token, append it, run again. This step "
        "does both on the same prompt and counts how often `generate()` called your model.",
        "`model(input_ids)` 把网络运行一次，返回每个位置上下一个 token 的得分（logits），不产生任何文字。"
        "`generate()` 是套在它外面的循环：选一个 token，接到后面，再运行一次。这一步在同一个提示词上做这两件事，"
        "并统计 `generate()` 调用了你的模型多少次。"),
    "lesson.cache.title": W("5. Prefill and decode, with and without the KV cache", "5. 预填充与解码：有无 KV 缓存"),
    "lesson.cache.text": W(
        "The second tutorial's (T2) manual loop: one forward pass over the whole prompt (prefill) fills the KV cache, "
        "then each new token is one forward pass over that token alone, reading the rest from `past_key_values`. "
        "This step runs that loop on your model with the cache and again without it.",
        "第二篇教程（T2）里的手写循环：先对整个提示词做一次前向传播（预填充），填满 KV 缓存；之后每个新 token "
        "只对这一个 token 做一次前向传播，其余部分从 `past_key_values` 里读取。这一步在你的模型上带缓存跑一遍，"
        "再不带缓存跑一遍。"),
    "lesson.infer.title": W("6. An inference mistake, raised live", "6. 一个推理错误，实时触发"),
    "lesson.infer.text": W(
        "The third tutorial's (T3) lost night: the model on the GPU, the inputs left on the CPU. This step runs exactly "
        "that mistake on your model, shows the error the installed PyTorch raises, then runs the fix.",
        "第三篇教程（T3）里那个熬掉的夜晚：模型在 GPU 上，输入却留在 CPU 上。这一步在你的模型上原样重现这个错误，"
        "展示已安装的 PyTorch 抛出的报错，然后运行修正后的代码。"),
    "lesson.train.title": W("7. A training mistake, raised live", "7. 一个训练错误，实时触发"),
    "lesson.train.text": W(
        "In a training loop the model moves once and the data every batch (the fourth and fifth tutorials, T4 and T5). This "
        "step runs a training step on your model with the labels left on the CPU, shows the error, then the fix.",
        "在训练循环里，模型只移动一次，数据每个批次都要移动（第四、五篇教程，T4 和 T5）。这一步在你的模型上跑一个训练步，"
        "故意把标签留在 CPU 上，展示报错，再运行修正。"),
    "lesson.fit.title": W("8. When the model does not fit: the placement map", "8. 模型放不下时：放置图"),
    "lesson.fit.text": W(
        "The tutorials' `device_map=\"auto\"` leads here: give each device a memory limit and Accelerate puts what "
        "does not fit on the disk. This step loads a second copy of the bundled model with 16 MB of RAM and a disk "
        "tier (your own model stays as it is) and reads where each block really is from its tensors.",
        "教程里的 `device_map=\"auto\"` 会引出这一步：给每个设备设一个内存上限，放不下的部分由 Accelerate 放到磁盘上。"
        "这一步用 16 MB 内存加磁盘层再加载一份内置模型（你自己的模型保持不变），并从张量本身读出每个块实际在哪里。"),
    "lesson.speed.title": W("9. Why decode runs at the speed it does", "9. 解码为什么是这个速度"),
    "lesson.speed.text": W(
        "Each new token reads every weight once, so the memory's read rate divided by the weights' bytes is the "
        "most tokens per second any engine can reach. This step measures `generate()` on your model and sets it "
        "against that bound, measured on this machine.",
        "每生成一个新 token 都要把全部权重读一遍，所以内存读取速率除以权重字节数，就是任何引擎每秒最多能生成的 "
        "token 数。这一步测量你的模型上 `generate()` 的速度，并与这台机器上实测的上限对比。"),
    "lesson.dtype.title": W("10. What a dtype changes: float32, bfloat16 and int8", "10. 数据类型改变了什么：float32、bfloat16 和 int8"),
    "lesson.dtype.text": W(
        "A dtype is a trade: fewer bytes per weight against the numbers the model computes with. int8 here is "
        "weight-only (torchao): each `nn.Linear` keeps int8 values and a float32 scale per row, and each step turns "
        "them back into float32 to multiply. This step runs your model in float32, bfloat16 and int8 through "
        "Compare and measures the weights' bytes, the decode rate and how many next-token choices stay float32's.",
        "数据类型是一种取舍：每个权重更少的字节，换来模型计算所用的数字变了。这里的 int8 只量化权重（torchao）："
        "每个 `nn.Linear` 保存 int8 数值和每行一个 float32 缩放因子，每一步都要先变回 float32 再相乘。"
        "这一步通过“对比”把你的模型分别以 float32、bfloat16 和 int8 运行，测量权重字节数、解码速度，"
        "以及有多少个下一个 token 的选择与 float32 相同。"),
    # -- the sentences the measurements choose -------------------------------------------------
    "lesson.load.said.mapped": W(
        "`from_pretrained` took {load} ms for {weights} of weights, and all of them still map the checkpoint file: "
        "nothing was copied into RAM yet. `model.to('{device}')` took {migrate} ms: {moved}. `eval()` took {eval} ms.",
        "`from_pretrained` 读取 {weights} 权重用了 {load} 毫秒，而且它们全都还映射着检查点文件：还没有任何字节被复制进内存。"
        "`model.to('{device}')` 用了 {migrate} 毫秒：{moved}。`eval()` 用了 {eval} 毫秒。"),
    "lesson.load.said.part": W(
        "`from_pretrained` took {load} ms for {weights} of weights; {mapped} of them still map the checkpoint file, "
        "the rest were copied into RAM. `model.to('{device}')` took {migrate} ms: {moved}. `eval()` took {eval} ms.",
        "`from_pretrained` 读取 {weights} 权重用了 {load} 毫秒；其中 {mapped} 仍映射着检查点文件，其余已复制进内存。"
        "`model.to('{device}')` 用了 {migrate} 毫秒：{moved}。`eval()` 用了 {eval} 毫秒。"),
    "lesson.load.said.copied": W(
        "`from_pretrained` took {load} ms for {weights} of weights, and none of them map the checkpoint file: every "
        "byte was copied (a dtype other than the file's, or a device other than the CPU, makes new tensors). "
        "`model.to('{device}')` took {migrate} ms: {moved}. `eval()` took {eval} ms.",
        "`from_pretrained` 读取 {weights} 权重用了 {load} 毫秒，而且没有一个还映射着检查点文件：每个字节都被复制了"
        "（与文件不同的数据类型或 CPU 以外的设备都会生成新的张量）。`model.to('{device}')` 用了 {migrate} 毫秒："
        "{moved}。`eval()` 用了 {eval} 毫秒。"),
    "lesson.moved.noop": W("the same `data_ptr` before and after, nothing moved", "前后 `data_ptr` 相同，什么也没移动"),
    "lesson.moved.copied": W("new tensors on {dst}, every weight copied", "在 {dst} 上生成了新张量，每个权重都复制了一遍"),
    "lesson.moved.auto": W("nothing to move, `device_map` placed the weights while loading",
                           "没有东西要移动，`device_map` 在加载时就放好了权重"),
    "lesson.to.dev.none": W(
        "Your `.to('{device}')` took {ms} ms and copied 0 bytes: all {tensors} tensors came back with the same "
        "`data_ptr`, they were already there.",
        "你的 `.to('{device}')` 用了 {ms} 毫秒，复制了 0 字节：全部 {tensors} 个张量返回时 `data_ptr` 都没变，它们本来就在那里。"),
    "lesson.to.dev.copied": W(
        "Your `.to('{device}')` took {ms} ms and copied {bytes}: {copied} of {tensors} tensors came back with a new "
        "`data_ptr`.",
        "你的 `.to('{device}')` 用了 {ms} 毫秒，复制了 {bytes}：{tensors} 个张量中有 {copied} 个返回时 `data_ptr` 变了。"),
    "lesson.to.cast.copied": W(
        "`.to(torch.{dtype})` is a copy on any device: {copied} of {tensors} tensors got a new `data_ptr`, {read} "
        "read and {written} written, in {ms} ms.",
        "`.to(torch.{dtype})` 在任何设备上都是复制：{tensors} 个张量中有 {copied} 个得到了新的 `data_ptr`，"
        "读取 {read}、写入 {written}，用时 {ms} 毫秒。"),
    "lesson.to.cast.none": W(
        "`.to(torch.{dtype})` copied 0 bytes in {ms} ms: all {tensors} tensors were in that dtype already.",
        "`.to(torch.{dtype})` 用 {ms} 毫秒复制了 0 字节：全部 {tensors} 个张量本来就是这个数据类型。"),
    "lesson.to.meta": W(" {meta} tensors on `meta` (offloaded) hold no values and were left alone.",
                        "另有 {meta} 个张量在 `meta` 上（已卸载），没有数值，未做处理。"),
    "lesson.to.said": W("{dev} {cast}{meta}", "{dev}{cast}{meta}"),
    "lesson.where.one": W("All {tensors} tensors ({bytes}) are on {device} in {dtype}: one place, nothing left behind.",
                          "全部 {tensors} 个张量（{bytes}）都在 {device} 上，数据类型为 {dtype}：只有一处，没有落下的。"),
    "lesson.where.mixed": W(
        "Your {tensors} tensors ({bytes}) are in {places} places ({list}): a model in more than one place is what a "
        "half-moved model looks like, unless `device_map` put it there.",
        "你的 {tensors} 个张量（{bytes}）分布在 {places} 处（{list}）：除非是 `device_map` 有意这样放置，"
        "否则分散在多处正是只移动了一半的模型的样子。"),
    "lesson.where.tied": W(
        " `parameters()` lists {params} and `state_dict()` {state}: {extra} more, because a tied weight is one "
        "tensor under two names, listed once by `parameters()` and twice by `state_dict()`.",
        "`parameters()` 列出 {params} 项，`state_dict()` 列出 {state} 项：多出 {extra} 项，因为绑定的权重是同一个张量"
        "有两个名字，`parameters()` 只列一次，`state_dict()` 列两次。"),
    "lesson.where.same": W(" `state_dict()` lists {state}: the {params} parameters and {buffers} buffers, each once.",
                           "`state_dict()` 列出 {state} 项：{params} 个参数和 {buffers} 个缓冲区，各列一次。"),
    "lesson.where.said": W("{place}{lists}", "{place}{lists}"),
    "lesson.forward.said": W(
        "One forward pass over your {prompt} prompt tokens took {fwd} ms and returned {positions} × {vocab} logits: "
        "a score for every vocabulary entry at every position, and no text. `generate()` made {new} new tokens in "
        "{gen} ms and {calls}; {first}. {warm}",
        "对你的 {prompt} 个提示词 token 做一次前向传播用了 {fwd} 毫秒，返回 {positions} × {vocab} 个 logits："
        "每个位置上词表里每一项的得分，没有文字。`generate()` 用 {gen} 毫秒生成了 {new} 个新 token，{calls}；{first}。{warm}"),
    "lesson.forward.warm": W(
        "Both were timed warm: each ran once untimed first ({fwarm} and {gwarm} forward passes), since a first "
        "call also pays one-time costs (kernels chosen, memory allocated, weights read in).",
        "两边都是预热后计时的：各自先不计时地运行一次（分别 {fwarm} 次和 {gwarm} 次前向传播），"
        "因为第一次调用还要付一次性的开销（选择内核、分配内存、读入权重）。"),
    "lesson.forward.cold": W(
        "Neither was warmed up first: a first call also pays one-time costs, so these times are not comparable.",
        "两边都没有先预热：第一次调用还要付一次性的开销，所以这两个时间不可比。"),
    "lesson.forward.calls.each": W("called the model {calls} times, once per new token",
                                   "调用了模型 {calls} 次，每个新 token 一次"),
    "lesson.forward.calls.other": W("called the model {calls} times", "调用了模型 {calls} 次"),
    "lesson.forward.first.same": W("its first token is the forward pass's highest-scoring one",
                                   "它的第一个 token 正是那次前向传播得分最高的那个"),
    "lesson.forward.first.other": W("its first token is not the forward pass's highest-scoring one",
                                    "它的第一个 token 并不是那次前向传播得分最高的那个"),
    "lesson.cache.faster": W(
        "Prefill ran your {prompt} prompt tokens through the model in one forward pass ({prefill} ms). Then each "
        "decode step took {cached} ms with the KV cache against {nocache} ms without it, {ratio} times as long: "
        "without the cache every step runs the whole sequence through the model again. {same}",
        "预填充用一次前向传播处理了你的 {prompt} 个提示词 token（{prefill} 毫秒）。之后每个解码步带 KV 缓存用 {cached} 毫秒，"
        "不带缓存用 {nocache} 毫秒，是前者的 {ratio} 倍：没有缓存，每一步都要把整个序列重新过一遍模型。{same}"),
    "lesson.cache.slower": W(
        "Prefill ran your {prompt} prompt tokens through the model in one forward pass ({prefill} ms). Then each "
        "decode step took {cached} ms with the KV cache and {nocache} ms without it ({ratio} times): at this "
        "length, recomputing the sequence cost no more than reading the cache. {same}",
        "预填充用一次前向传播处理了你的 {prompt} 个提示词 token（{prefill} 毫秒）。之后每个解码步带 KV 缓存用 {cached} 毫秒，"
        "不带缓存用 {nocache} 毫秒（{ratio} 倍）：在这个长度下，重新计算整个序列并不比读缓存更慢。{same}"),
    "lesson.cache.same": W("Both loops chose the same {new} tokens.", "两个循环选出的 {new} 个 token 完全相同。"),
    "lesson.cache.differ": W("The two loops chose different tokens from token {at} on.", "两个循环从第 {at} 个 token 起选出的 token 不同。"),
    "lesson.mistake.sim": W(
        "Raised live on a simulated GPU (this machine has none, so the model's weights sat on PyTorch's fake "
        "`cuda:0`): {error}: “{message}”. A real GPU raises “{real}”. {fix}",
        "在模拟的 GPU 上实时触发（这台机器没有 GPU，所以模型权重放在 PyTorch 的假 `cuda:0` 上）：{error}：“{message}”。"
        "真实 GPU 上的报错是“{real}”。{fix}"),
    "lesson.mistake.real": W("Raised live by the installed library: {error}: “{message}”. {fix}",
                             "由已安装的库实时抛出：{error}：“{message}”。{fix}"),
    "lesson.mistake.silent": W("Nothing was raised: this mistake runs without an error, which is what makes it costly. {fix}",
                               "没有抛出任何错误：这个错误能照常运行，这正是它代价高的原因。{fix}"),
    "lesson.fix.ok": W("The fix ran for real and worked.", "修正后的代码实际运行成功。"),
    "lesson.fix.failed": W("The fix failed as well: {error}.", "修正后的代码也失败了：{error}。"),
    "lesson.fit.disk": W(
        "Under `{limits}`, {disk} of {blocks} blocks ({disk_bytes}) are on the disk and {ram} ({ram_bytes}) in RAM, "
        "read from the tensors: an offloaded weight's `p.device` says `meta`, and Accelerate's hook reads its values "
        "from the checkpoint at every forward pass. The plan and the tensors agree on {agree} of {blocks} blocks.",
        "在 `{limits}` 下，{blocks} 个块中有 {disk} 个（{disk_bytes}）在磁盘上，{ram} 个（{ram_bytes}）在内存里，"
        "这是从张量本身读出来的：被卸载的权重 `p.device` 显示为 `meta`，Accelerate 的钩子在每次前向传播时从检查点读取它的数值。"
        "计划与张量实际位置在 {blocks} 个块中有 {agree} 个一致。"),
    "lesson.fit.none": W(
        "Under `{limits}`, all {blocks} blocks ({ram_bytes}) fit in RAM: nothing went to the disk. The plan and the "
        "tensors agree on {agree} of {blocks} blocks.",
        "在 `{limits}` 下，全部 {blocks} 个块（{ram_bytes}）都放进了内存：没有任何块去磁盘。"
        "计划与张量实际位置在 {blocks} 个块中有 {agree} 个一致。"),
    "lesson.speed.said": W(
        "`generate()` decoded {new} tokens at {tps} tokens/s. Reading {weights} of weights once per token at this "
        "machine's measured {read} GB/s allows at most {bound} tokens/s: this run reached {share}% of that bound. "
        "What that share leaves open, a profile of the run answers, as the Speed tab's engines panel says it: {limit}",
        "`generate()` 以每秒 {tps} 个 token 的速度解码了 {new} 个 token。每个 token 把 {weights} 权重读一遍，"
        "按这台机器实测的 {read} GB/s 计算，最多每秒 {bound} 个 token：这次达到了上限的 {share}%。"
        "这个比例说明不了的，由这次运行的性能剖析回答，和速度标签页的解码引擎面板说法一致：{limit}"),
    # -- the figures' names ----------------------------------------------------------------------
    "lesson.fig.load_ms": W("`from_pretrained` (ms)", "`from_pretrained`（毫秒）"),
    "lesson.fig.migrate_ms": W("`model.to(device)` at load (ms)", "加载时的 `model.to(device)`（毫秒）"),
    "lesson.fig.eval_ms": W("`eval()` (ms)", "`eval()`（毫秒）"),
    "lesson.fig.weights_bytes": W("weights", "权重"),
    "lesson.fig.mapped_bytes": W("still memory-mapped from the file", "仍映射着文件的部分"),
    "lesson.fig.device": W("device", "设备"),
    "lesson.fig.dtype": W("dtype", "数据类型"),
    "lesson.fig.migrate": W("what `.to()` did at load", "加载时 `.to()` 做了什么"),
    "lesson.fig.tensors": W("tensors (tied weights once)", "张量数（绑定权重算一次）"),
    "lesson.fig.dev_copied": W("`.to(device)`: tensors copied", "`.to(device)`：复制的张量数"),
    "lesson.fig.dev_bytes": W("`.to(device)`: bytes copied", "`.to(device)`：复制的字节"),
    "lesson.fig.dev_ms": W("`.to(device)` (ms)", "`.to(device)`（毫秒）"),
    "lesson.fig.cast_dtype": W("the cast's dtype", "转换的目标数据类型"),
    "lesson.fig.cast_copied": W("cast: tensors copied", "转换：复制的张量数"),
    "lesson.fig.cast_read": W("cast: bytes read", "转换：读取的字节"),
    "lesson.fig.cast_written": W("cast: bytes written", "转换：写入的字节"),
    "lesson.fig.cast_ms": W("cast (ms)", "转换（毫秒）"),
    "lesson.fig.meta": W("tensors on meta (offloaded)", "在 meta 上的张量（已卸载）"),
    "lesson.fig.bytes": W("bytes", "字节"),
    "lesson.fig.places": W("(device, dtype) places", "（设备，数据类型）组合数"),
    "lesson.fig.parameters": W("listed by `parameters()`", "`parameters()` 列出的项数"),
    "lesson.fig.buffers": W("listed by `buffers()`", "`buffers()` 列出的项数"),
    "lesson.fig.state_dict": W("listed by `state_dict()`", "`state_dict()` 列出的项数"),
    "lesson.fig.prompt_tokens": W("prompt tokens", "提示词 token 数"),
    "lesson.fig.positions": W("logits: positions", "logits：位置数"),
    "lesson.fig.vocab": W("logits: vocabulary", "logits：词表大小"),
    "lesson.fig.forward_ms": W("one forward pass (ms)", "一次前向传播（毫秒）"),
    "lesson.fig.new_tokens": W("new tokens", "新 token 数"),
    "lesson.fig.calls": W("forward passes inside `generate()`", "`generate()` 内部的前向传播次数"),
    "lesson.fig.generate_ms": W("`generate()` (ms)", "`generate()`（毫秒）"),
    "lesson.fig.same_first": W("first token = forward's top score", "第一个 token = 前向传播的最高分"),
    "lesson.fig.forward_warmup": W("untimed warm-up: forward passes before the timed forward",
                                   "不计时的预热：计时的前向传播之前的前向传播次数"),
    "lesson.fig.generate_warmup": W("untimed warm-up: forward passes of a `generate()` before the timed one",
                                    "不计时的预热：计时的 `generate()` 之前那次 `generate()` 的前向传播次数"),
    "lesson.fig.prefill_ms": W("prefill (ms)", "预填充（毫秒）"),
    "lesson.fig.cached_ms": W("decode step with the cache, median (ms)", "带缓存的解码步，中位数（毫秒）"),
    "lesson.fig.nocache_ms": W("decode step without the cache, median (ms)", "不带缓存的解码步，中位数（毫秒）"),
    "lesson.fig.ratio": W("without ÷ with", "不带 ÷ 带"),
    "lesson.fig.same_tokens": W("same tokens", "token 相同"),
    "lesson.fig.scenario": W("mistake", "错误"),
    "lesson.fig.raised": W("raised", "抛出报错"),
    "lesson.fig.simulated": W("simulated (no GPU here)", "模拟（此处无 GPU）"),
    "lesson.fig.error_type": W("exception", "异常类型"),
    "lesson.fig.message": W("the library's message", "库给出的报错信息"),
    "lesson.fig.real_gpu": W("a real GPU's message", "真实 GPU 上的报错"),
    "lesson.fig.fix_ok": W("the fix worked", "修正有效"),
    "lesson.fig.limits": W("limits", "限制"),
    "lesson.fig.blocks": W("blocks", "块数"),
    "lesson.fig.disk_blocks": W("blocks on the disk", "磁盘上的块"),
    "lesson.fig.disk_bytes": W("bytes on the disk", "磁盘上的字节"),
    "lesson.fig.ram_blocks": W("blocks in RAM", "内存里的块"),
    "lesson.fig.ram_bytes": W("bytes in RAM", "内存里的字节"),
    "lesson.fig.agree": W("blocks where plan = tensors", "计划与张量一致的块"),
    "lesson.fig.model_device": W("what `model.device` says", "`model.device` 显示的设备"),
    "lesson.fig.tps": W("decode tokens/s", "解码 token/秒"),
    "lesson.fig.read_gbps": W("measured read rate (GB/s)", "实测读取速率（GB/s）"),
    "lesson.fig.bound": W("bandwidth bound (tokens/s)", "带宽上限（token/秒）"),
    "lesson.fig.share": W("share of the bound (%)", "达到上限的比例（%）"),
    "lesson.fig.per_ms": W("time per token (ms)", "每个 token 的耗时（毫秒）"),
    "lesson.fig.over_ms": W("time per token above the bound's (ms)", "每个 token 超出上限所需时间的部分（毫秒）"),
    "lesson.fig.profiled": W("tokens profiled", "剖析的 token 数"),
    "lesson.fig.matmul_share": W("matrix multiplications' share of the time (%)", "矩阵乘法占用的时间比例（%）"),
    "lesson.fig.matmul_gbps": W("their read rate (GB/s)", "它们的读取速率（GB/s）"),
    "lesson.fig.others": W("the largest other operators", "其他最耗时的算子"),
    "lesson.fig.f32_bytes": W("float32: weights", "float32：权重"),
    "lesson.fig.bf16_bytes": W("bfloat16: weights", "bfloat16：权重"),
    "lesson.fig.int8_bytes": W("int8: weights (scales included)", "int8：权重（含缩放因子）"),
    "lesson.fig.f32_tps": W("float32: decode (tokens/s)", "float32：解码（token/秒）"),
    "lesson.fig.bf16_tps": W("bfloat16: decode (tokens/s)", "bfloat16：解码（token/秒）"),
    "lesson.fig.int8_tps": W("int8: decode (tokens/s)", "int8：解码（token/秒）"),
    "lesson.fig.decode_tokens": W("decode steps timed per run", "每次计时的解码步数"),
    "lesson.fig.compared": W("positions compared with float32", "与 float32 比较的位置数"),
    "lesson.fig.bf16_same": W("bfloat16: next tokens as float32's", "bfloat16：与 float32 相同的下一个 token"),
    "lesson.fig.int8_same": W("int8: next tokens as float32's", "int8：与 float32 相同的下一个 token"),
    "lesson.fig.int8_layers": W("int8: weight matrices quantized", "int8：量化了的权重矩阵数"),
    "lesson.fig.int8_step_ms": W("int8: a decode step, profiled (ms)", "int8：剖析的一个解码步（毫秒）"),
    "lesson.fig.int8_convert_ms": W("int8: of it, converting dtypes (ms)", "int8：其中转换数据类型（毫秒）"),
    "lesson.fig.f32_convert_ms": W("float32: converting dtypes per step (ms)", "float32：每步转换数据类型（毫秒）"),
    "lesson.dtype.said.none": W(
        "float32 holds {f32} and decodes {f32_tps} tokens/s; bfloat16 holds {bf16} at {bf16_tps} tokens/s and chose "
        "float32's next token at {bf16_same} of {n} positions. int8 changed nothing on this model ({int8} at "
        "{int8_tps} tokens/s): torchao quantizes `nn.Linear` weights, and none of its weight matrices could be: "
        "{skipped}.",
        "float32 占 {f32}，解码每秒 {f32_tps} 个 token；bfloat16 占 {bf16}，每秒 {bf16_tps} 个 token，"
        "在 {n} 个位置中有 {bf16_same} 个选了和 float32 相同的下一个 token。int8 在这个模型上什么也没改变"
        "（{int8}，每秒 {int8_tps} 个 token）：torchao 量化的是 `nn.Linear` 的权重，而它的权重矩阵一个也不能量化：{skipped}。"),
    "lesson.dtype.said.some": W(
        "float32 holds {f32} and decodes {f32_tps} tokens/s; bfloat16 holds {bf16} at {bf16_tps} tokens/s and chose "
        "float32's next token at {bf16_same} of {n} positions; int8 ({layers} weight matrices quantized) holds {int8}, "
        "{share}× float32's, decodes {int8_tps} tokens/s, {speed}, and chose float32's next token at {int8_same} of "
        "{n} positions.{why}",
        "float32 占 {f32}，解码每秒 {f32_tps} 个 token；bfloat16 占 {bf16}，每秒 {bf16_tps} 个 token，"
        "在 {n} 个位置中有 {bf16_same} 个选了和 float32 相同的下一个 token；int8（量化了 {layers} 个权重矩阵）"
        "占 {int8}，是 float32 的 {share} 倍，每秒解码 {int8_tps} 个 token，{speed}，"
        "在 {n} 个位置中有 {int8_same} 个选了和 float32 相同的下一个 token。{why}"),
    "lesson.dtype.speed.faster": W("faster than float32 in every timed run", "每次计时运行都比 float32 快"),
    "lesson.dtype.speed.slower": W("slower than float32 in every timed run", "每次计时运行都比 float32 慢"),
    "lesson.dtype.speed.unclear": W("too close to float32's runs to tell which is faster",
                                    "与 float32 的各次运行太接近，分不出谁更快"),
    "lesson.dtype.why": W(
        " Why slower: of int8's {step} ms per step, {conv} ms go to converting its integers back into float32 "
        "(float32 spends {f32} ms on conversions).",
        "为什么更慢：int8 每步 {step} 毫秒中有 {conv} 毫秒花在把整数变回 float32 上（float32 在转换上只花 {f32} 毫秒）。"),
    "lesson.dtype.failed": W("The dtype step could not run {pair}: {error}", "数据类型这一步无法运行 {pair}：{error}"),
    "lesson.fig.int8_share": W("int8 weights ÷ float32 weights", "int8 权重 ÷ float32 权重"),
    "lesson.dtype.skip.embedding": W("its embeddings (lookups)", "它的词嵌入（查表）"),
    "lesson.dtype.skip.tied": W("its output head (the embedding's own tensor)", "它的输出头（就是词嵌入那个张量）"),
    "lesson.dtype.skip.not_linear": W("its `{kinds}` layers (not `nn.Linear`)", "它的 `{kinds}` 层（不是 `nn.Linear`）"),
    "lesson.dtype.skip.group": W("layers whose inputs do not split into groups", "输入维度不能按组切分的层"),
}
