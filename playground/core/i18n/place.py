"""Placement, offload and their cost: limits, the plan, the placement map, the cliff, load straight vs move."""

from playground.core.i18n.words import W

PREFIXES = ("place",)

TEXT: dict[str, W] = {
    "place.phase": W("planned on the meta device for {limits}: {tiers}", "在 meta 设备上按 {limits} 规划：{tiers}"),
    # ---------------------------------------------------------------- refusals
    "place.err.limits_type": W("Memory limits are text, e.g. {example}.", "内存限制是一段文本，例如 {example}。"),
    "place.err.limits_long": W("Memory limits of {n} characters: at most 200. Write e.g. cpu=120MB,disk.",
                               "内存限制有 {n} 个字符：最多 200 个。请写成例如 cpu=120MB,disk。"),
    "place.err.limits_empty": W(
        "No memory limit given. Write each device's limit, and disk to let the rest go to the disk, e.g. {example}.",
        "没有给出内存限制。请写出每个设备的限制，再加上 disk 让放不下的部分去磁盘，例如 {example}。"),
    "place.err.limit_item": W(
        "{got} is not a limit. Write device=size (cpu, mps, cuda or cuda:N; sizes like 120MB or 2GB), or disk, "
        "separated by commas, e.g. {example}.",
        "{got} 不是一个限制。请写成 设备=大小（cpu、mps、cuda 或 cuda:N；大小如 120MB 或 2GB），或 disk，"
        "用逗号分隔，例如 {example}。"),
    "place.err.limit_size": W(
        "{got} is not a memory size for {device}. Write a positive number with a unit: KB, MB, GB (powers of 1000) "
        "or KiB, MiB, GiB (powers of 1024), e.g. 120MB.",
        "{got} 不是 {device} 的内存大小。请写一个带单位的正数：KB、MB、GB（1000 的幂）或 KiB、MiB、GiB（1024 的幂），"
        "例如 120MB。"),
    "place.err.limit_twice": W("{device} has two limits. Give each device one.", "{device} 有两个限制。每个设备只给一个。"),
    "place.err.limits_device": W(
        "Memory limits place the model with device_map=\"auto\": leave --device out (or write auto), not {device}.",
        "内存限制会用 device_map=\"auto\" 放置模型：请不要给 --device（或写 auto），而不是 {device}。"),
    "place.err.absent": W(
        "{device} is not on this machine, so a model cannot be loaded there. Plan it instead (the plan needs only "
        "config.json), or leave {device} out of {limits}.",
        "这台机器上没有 {device}，所以不能把模型加载到那里。可以改为做规划（规划只需要 config.json），"
        "或者从 {limits} 中去掉 {device}。"),
    "place.err.below_block": W(
        "{device}={limit} is below one block: {block} alone needs {size}, and Accelerate never splits a block (it "
        "also keeps room for the largest one where offloaded blocks run). Give {device} at least {size}.",
        "{device}={limit} 小于一个块：仅 {block} 就需要 {size}，而 Accelerate 从不拆分块"
        "（它还要在运行被卸载块的设备上为最大的块留出空间）。请给 {device} 至少 {size}。"),
    "place.err.needs_disk": W(
        "These limits ({limits}) leave {n} {n?block|blocks}, {bytes}, with nowhere to go. Add the disk tier (`,disk`) to "
        "offload them to the disk, or raise a limit.",
        "这些限制（{limits}）让 {n} 个块（{bytes}）无处可放。请加上磁盘层（`,disk`）把它们卸载到磁盘，或者调高某个限制。"),
    "place.err.ram": W(
        "The plan puts {need} (with the 20% margin) in RAM, and {avail} is available ({where}). Give cpu a lower "
        "limit and add the disk tier, e.g. cpu=…,disk.",
        "该规划要在内存中放 {need}（含 20% 余量），而可用的只有 {avail}（{where}）。请给 cpu 一个更低的限制并加上磁盘层，"
        "例如 cpu=…,disk。"),
    "place.err.vram": W("The plan puts {need} on {device}, which has {free} free. Give {device} a lower limit.",
                        "该规划要在 {device} 上放 {need}，而它只剩 {free}。请给 {device} 一个更低的限制。"),
    "place.folder_role": W("the offload folder (in the server's temporary folder)", "卸载文件夹（在服务器的临时文件夹中）"),
    "place.err.folder_unwritable": W(
        "{role} cannot be written ({why}, {code}), so nothing can be offloaded to the disk. The model loaded "
        "before keeps serving. Load without the disk tier, or ask the operator to free the temporary folder.",
        "{role}无法写入（{why}，{code}），所以无法把任何东西卸载到磁盘。之前加载的模型继续服务。"
        "请不带磁盘层加载，或请运维人员处理临时文件夹。"),
    "place.err.folder_full": W(
        "{role} has {free} free, and the disk tier may need {need} there (Accelerate writes an offloaded weight "
        "there when it cannot read it in place from the checkpoint). The model loaded before keeps serving.",
        "{role}只剩 {free}，而磁盘层可能需要 {need}（当 Accelerate 不能直接从检查点原地读取某个被卸载的权重时，"
        "会把它写到那里）。之前加载的模型继续服务。"),
    # ---------------------------------------------------------------- progress and notes of the measurements
    "place.progress.ram": W("the same checkpoint all in RAM: load, run, free", "同一检查点全部放在内存中：加载、运行、释放"),
    "place.progress.warm": W("the offloaded model, warm (page cache)", "被卸载的模型，热（页缓存）"),
    "place.progress.cold": W("the offloaded model, cold (evicted before every forward pass)",
                             "被卸载的模型，冷（每次前向传播前都从页缓存中清除）"),
    "place.progress.rate": W("the disk's cold read rate on the offloaded bytes", "在被卸载的字节上测磁盘的冷读速率"),
    "place.progress.cliff": W("{k} {k?block|blocks} on the disk: load, warm run, cold run", "{k} 个块在磁盘上：加载、热运行、冷运行"),
    "place.note.no_evict": W(
        "No cold run: this OS offers no posix_fadvise to drop files from the page cache (macOS, Windows).",
        "没有冷运行：这个操作系统没有 posix_fadvise，无法把文件从页缓存中清除（macOS、Windows）。"),
    "place.note.no_ram": W(
        "No all-in-RAM run to compare with: the same checkpoint in RAM ({need} bytes with a 20% margin) would not "
        "fit beside the loaded model.",
        "没有全部放在内存中的运行可供对比：同一检查点放进内存（{need} 字节，含 20% 余量）放不下，加载的模型还占着内存。"),
    "place.err.not_offloaded": W(
        "{model} has no offloaded block: every weight stays where it runs, so nothing moves per token. Load it with "
        "memory limits first (Load with these limits).",
        "{model} 没有被卸载的块：每个权重都待在它运行的地方，所以每个 token 什么都不用搬。请先带着内存限制加载它"
        "（“按这些限制加载”）。"),
    "place.err.straight_auto": W("Pick one device: auto spreads the model, so there is nothing to move afterwards.",
                                 "请选一个具体设备：auto 会把模型分散开，之后就没有什么可搬的了。"),
    "place.err.straight_cpu": W(
        "On the CPU, .to('cpu') moves nothing, so the question is the dtype's: pick float16 or bfloat16 (loaded "
        "straight in it, against loaded in float32 then cast).",
        "在 CPU 上 .to('cpu') 什么也不搬，所以要比较的是数据类型：请选 float16 或 bfloat16"
        "（直接以它加载，对比先以 float32 加载再转换）。"),
    # ---------------------------------------------------------------- the tab
    "place.tab": W("Placement", "放置"),
    "place.intro": W(
        "When the model does not fit: give each device a memory limit and let Accelerate place the blocks "
        "(`from_pretrained(device_map=\"auto\", max_memory=..., offload_folder=...)`). **Plan** asks Accelerate's planner "
        "from config.json alone; **Load** loads with those limits and reads, block by block, where each tensor "
        "actually is (`p.device`, and for a weight on `meta` the hook that holds its values). On this machine the "
        "disk tier runs for real: the weights move, disk to RAM, in every forward pass.",
        "模型放不下的时候：给每个设备一个内存限制，让 Accelerate 来放置各个块"
        "（`from_pretrained(device_map=\"auto\", max_memory=..., offload_folder=...)`）。**规划** 只凭 config.json 询问 "
        "Accelerate 的规划器；**加载** 按这些限制加载，并逐块读出每个张量实际在哪里（`p.device`，对于在 `meta` 上的权重，"
        "再看保存它的值的钩子）。在这台机器上，磁盘层是真实运行的：每次前向传播，权重都从磁盘搬进内存。"),
    "place.ui.limit": W("memory limit", "内存限制"),
    "place.ui.no_limit": W("no limit (e.g. 200MB)", "不限制（例如 200MB）"),
    "place.ui.disk": W("disk tier", "磁盘层"),
    "place.ui.disk.info": W("what does not fit goes to the disk (offload folder)", "放不下的部分去磁盘（卸载文件夹）"),
    "place.ui.limits": W("limits, as the API takes them", "限制（load_placed 接受的写法）"),
    "place.ui.limits.info": W(
        "follows the fields above; edit it to plan for devices this machine lacks, e.g. cuda:0=2GB,cpu=8GB,disk",
        "随上面的输入框变化；也可以直接编辑它，为这台机器没有的设备做规划，例如 cuda:0=2GB,cpu=8GB,disk"),
    "place.ui.plan": W("Plan", "规划"),
    "place.ui.load": W("Load with these limits", "按这些限制加载"),
    "place.ui.show": W("Map of the loaded model", "已加载模型的放置图"),
    "place.ui.cost": W("Measure the cost", "测量代价"),
    "place.ui.blocks": W("blocks offloaded, up to", "最多卸载的块数"),
    "place.ui.cliff": W("Run the cliff", "运行悬崖测试"),
    "place.ui.straight": W("Time both", "两种都计时"),
    # the picture and the tables
    "place.row.plan": W("plan (config.json)", "规划（config.json）"),
    "place.row.intended": W("intended (hf_device_map)", "预期（hf_device_map）"),
    "place.row.actual": W("actual (the tensors)", "实际（张量）"),
    "place.tier.cuda": W("GPU (CUDA)", "GPU（CUDA）"),
    "place.tier.mps": W("GPU (MPS)", "GPU（MPS）"),
    "place.tier.cpu": W("CPU RAM", "CPU 内存"),
    "place.tier.disk": W("disk", "磁盘"),
    "place.tier.meta": W("meta: no values anywhere", "meta：哪里都没有值"),
    "place.tier.mixed": W("mixed", "混合"),
    "place.offered.limit": W("your limit", "你的限制"),
    "place.offered.free": W("free here", "这里的空闲量"),
    "place.group": W("`{first}` … `{last}` ({n} blocks)", "`{first}` … `{last}`（{n} 个块）"),
    "place.tied": W("tied to `{to}`", "与 `{to}` 绑定"),
    "place.col.block": W("block", "块"),
    "place.col.bytes": W("bytes", "字节"),
    "place.col.plan": W("plan", "规划"),
    "place.col.intended": W("intended", "预期"),
    "place.col.actual": W("actual", "实际"),
    "place.col.devices": W("p.device says", "p.device 显示"),
    "place.col.store": W("values kept in", "值保存在"),
    "place.col.runs": W("runs on", "运行在"),
    "place.store.resident": W("the tensor itself", "张量本身"),
    "place.store.cpu-state-dict": W("a CPU state dict (copied in per pass)", "CPU 上的 state_dict（每次前向拷贝进来）"),
    "place.store.checkpoint": W("the checkpoint, memory-mapped (read per pass)", "检查点，内存映射（每次前向读取）"),
    "place.store.offload-folder": W("a file in the offload folder (read per pass)", "卸载文件夹中的文件（每次前向读取）"),
    "place.store.none": W("nowhere: no data", "哪里都没有：没有数据"),
    "place.store.mixed": W("mixed", "混合"),
    "place.plan.summary": W(
        "**Plan for `{model}` in {dtype}**, limits `{limits}`: the planner was offered {offered}. It places "
        "{tiers}; {offloaded} offloaded (the forward pass runs on `{main}`). {n} blocks; the largest, `{largest}`, "
        "{largest_bytes}: no limit may be below it.",
        "**`{model}`（{dtype}）的规划**，限制 `{limits}`：规划器可用的是 {offered}。它放置了 {tiers}；"
        "被卸载 {offloaded}（前向传播在 `{main}` 上运行）。共 {n} 个块；最大的 `{largest}` 为 {largest_bytes}："
        "任何限制都不能低于它。"),
    "place.plan.absent": W(
        "Planned for {devices}, which this machine does not have: from your numbers alone (loading there is refused).",
        "为 {devices} 做了规划，但这台机器没有它：只根据你给的数字（在这里加载会被拒绝）。"),
    "place.plan.warnings": W("The planner warned, live:", "规划器实时给出的警告："),
    "place.map.summary": W(
        "**Where `{model}`'s weights are** (limits `{limits}`): {tiers}; {offloaded} offloaded. {hooks} modules carry "
        "Accelerate's `AlignDevicesHook`, {offloading} of them bring their weights in for every forward pass. "
        "`model.device` says `{model_device}`; inputs go to `{main}`.",
        "**`{model}` 的权重在哪里**（限制 `{limits}`）：{tiers}；被卸载 {offloaded}。有 {hooks} 个模块挂着 Accelerate 的 "
        "`AlignDevicesHook`，其中 {offloading} 个在每次前向传播时把权重搬进来。`model.device` 显示 `{model_device}`；"
        "输入应放到 `{main}`。"),
    "place.map.model_device_meta": W(
        "`model.device` reads the first parameter, which is offloaded and so sits on `meta`: inputs sent there have "
        "no data. Send them to `{main}`, where the first block runs.",
        "`model.device` 读的是第一个参数，而它被卸载了，所以在 `meta` 上：送到那里的输入没有数据。"
        "请把输入送到第一个块运行的 `{main}`。"),
    "place.map.agree": W("Plan, intended and actual agree for every block.", "每个块的规划、预期与实际都一致。"),
    "place.map.differences": W("⚠️ {n} {n?block|blocks} where plan, intended and actual disagree (outlined in red, ⚠️ below).",
                               "⚠️ 有 {n} 个块的规划、预期与实际不一致（红框标出，下表中带 ⚠️）。"),
    "place.map.hop": W("Activations hop from `{src}` to `{dst}` after `{after}` (the black bar).",
                       "在 `{after}` 之后，激活值从 `{src}` 跳到 `{dst}`（黑色竖条）。"),
    "place.map.how": W(
        "Actual: each tensor's `p.device`; a tensor on `meta` is looked up in the `weights_map` of the Accelerate hook "
        "that loads it (a CPU state dict, or a file: the memory-mapped checkpoint or the offload folder). "
        "Intended: `model.hf_device_map`. Plan: the planner on config.json, before loading.",
        "实际：每个张量的 `p.device`；在 `meta` 上的张量，到负责加载它的 Accelerate 钩子的 `weights_map` 里去查"
        "（CPU 上的 state_dict，或一个文件：内存映射的检查点或卸载文件夹）。预期：`model.hf_device_map`。"
        "规划：加载之前，规划器只看 config.json 得出的结果。"),
    # ---------------------------------------------------------------- the cost
    "place.cost.title": W("### What offloading costs, per token", "### 卸载的代价（每个 token）"),
    "place.cost.intro": W(
        "The loaded offloaded model generates the same greedy tokens three ways: a private copy all in RAM, the "
        "offloaded model **warm** (what it reads stays in the page cache, as it does on a machine with RAM to "
        "spare) and **cold** (the offloaded files evicted from the page cache before every forward pass with "
        "`posix_fadvise(DONTNEED)`, as on a machine whose RAM cannot hold them). Per decode step: bytes Accelerate's "
        "hooks bring in, bytes read from the disk (this process's I/O counters), and where the time went.",
        "已加载的卸载模型用三种方式生成相同的贪心 token：一份全部放在内存中的私有副本；卸载模型**热**运行"
        "（读过的内容留在页缓存里，就像内存富余的机器）；以及**冷**运行（每次前向传播之前用 `posix_fadvise(DONTNEED)` "
        "把被卸载的文件从页缓存中清除，就像内存装不下它们的机器）。每个解码步骤：Accelerate 的钩子搬进来的字节、"
        "从磁盘读取的字节（本进程的 I/O 计数器），以及时间花在了哪里。"),
    "place.cost.summary": W(
        "`{model}` in {dtype}, limits `{limits}`: {blocks} {blocks?block|blocks}, {offloaded}, offloaded. {n} greedy tokens after "
        "`{prompt}` in every run (EOS held back until then); per-token figures are the decode steps' (one forward "
        "pass each).",
        "`{model}`（{dtype}），限制 `{limits}`：{blocks} 个块（{offloaded}）被卸载。每次运行都在 `{prompt}` 之后生成 {n} 个"
        "贪心 token（之前不允许 EOS）；每个 token 的数字来自解码步骤（每步一次前向传播）。"),
    "place.col.run": W("run", "运行"),
    "place.col.tokens": W("tokens", "token 数"),
    "place.col.rate": W("decode tokens/s", "解码 tokens/s"),
    "place.col.moved": W("moved per token", "每个 token 搬运"),
    "place.col.copied": W("of which copied", "其中拷贝"),
    "place.col.disk": W("read from disk per token", "每个 token 读磁盘"),
    "place.col.slowdown": W("slower than RAM", "比全内存慢"),
    "place.col.same": W("same tokens as RAM", "与全内存的 token 相同"),
    "place.run.ram": W("all in RAM", "全部在内存"),
    "place.run.warm": W("offloaded, warm", "卸载，热"),
    "place.run.cold": W("offloaded, cold", "卸载，冷"),
    "place.same.ref": W("(the reference)", "（参照）"),
    "place.same.yes": W("yes, token for token", "是，逐个相同"),
    "place.same.no": W("no: from token {i} on", "否：从第 {i} 个 token 起"),
    "place.seeing.cache": W(
        "**What your generations pay here is the warm row**: the hooks bring in {moved} per token, and the disk "
        "delivered {disk} of it: the page cache served the rest (recently read files stay in RAM the kernel has "
        "spare). On a machine whose RAM cannot cache the offloaded files, each token reads them from the disk: "
        "the cold row, {cold_disk} per token.",
        "**你在这里的生成付出的是“热”那一行的代价**：钩子每个 token 搬进 {moved}，其中磁盘只提供了 {disk}，"
        "其余由页缓存提供（最近读过的文件会留在内核空闲的内存里）。在内存缓存不下被卸载文件的机器上，"
        "每个 token 都要从磁盘读取它们：即“冷”那一行，每个 token {cold_disk}。"),
    "place.seeing.disk": W(
        "**Your generations read from the disk here**: {disk} per token of the {moved} the hooks bring in, even warm: "
        "this machine's page cache does not keep the offloaded files.",
        "**你在这里的生成确实在读磁盘**：即使是热运行，钩子每个 token 搬进的 {moved} 中也有 {disk} 来自磁盘："
        "这台机器的页缓存留不住被卸载的文件。"),
    "place.seeing.unknown": W("This OS keeps no count of the bytes a process reads from the disk.",
                              "这个操作系统不统计进程从磁盘读取的字节数。"),
    "place.cold.kept": W(
        "⚠️ The cold run read only {disk} per token from the disk of the {moved} the hooks bring in: for the rest the "
        "eviction did not take, because some process still maps those pages (a model loaded from the same "
        "checkpoint, here or in another process). Its figures are then partly a warm run's.",
        "⚠️ 冷运行每个 token 只从磁盘读了 {disk}，而钩子搬进来的是 {moved}：其余部分没能清除出页缓存，"
        "因为还有进程映射着这些页（从同一检查点加载的模型，在本进程或别的进程里）。所以它的数字有一部分是热运行的。"),
    "place.cost.rate": W(
        "The disk's cold read rate on these very bytes: **{gbps} GB/s** ({read} read in {ms} ms with `pread` after "
        "eviction). Disk-read bound for the cold run: **{bound} tokens/s**; it reached {pct}% of it.",
        "磁盘在这些字节上的冷读速率：**{gbps} GB/s**（清除缓存后用 `pread` 在 {ms} ms 内读了 {read}）。"
        "冷运行的磁盘读取上限：**{bound} tokens/s**；实际达到了它的 {pct}%。"),
    "place.cost.rate_cached": W(
        "The disk's read rate could not be measured: the {cached} of offloaded weights stayed in the page cache "
        "through the eviction (a mapping of the same file, another model loaded from it, holds the pages).",
        "无法测出磁盘读取速率：被卸载的 {cached} 权重在清除后仍留在页缓存中（同一文件的另一个映射，"
        "比如从它加载的另一个模型，占着这些页）。"),
    "place.breakdown.title": W("Where a decode step's time went (ms per token):", "一个解码步骤的时间花在了哪里（每个 token 的毫秒数）："),
    "place.breakdown.title_cold": W("Where a cold decode step's time went (ms per token), by blocks on the disk:",
                                    "冷运行一个解码步骤的时间花在了哪里（每个 token 的毫秒数），按磁盘上的块数："),
    "place.col.total_ms": W("total", "总计"),
    "place.col.hooks_ms": W("in the hooks", "在钩子里"),
    "place.col.forward_ms": W("the rest of the step", "步骤的其余部分"),
    "place.col.ram_ms": W("all-in-RAM copy (reference)", "全内存副本（参照）"),
    "place.col.disk_ms": W("disk at its rate (reference)", "按速率读磁盘（参照）"),
    "place.breakdown.how": W(
        "The first two columns after the total are the step's parts, measured in the same run: time inside "
        "Accelerate's hooks, and the rest (the forward pass's arithmetic and, for weights mapped from the file, the "
        "page faults that read them in). They add up to the total. The last two are references from elsewhere, "
        "never parts: the all-in-RAM copy's step, and the least time the bytes read from the disk per token take "
        "at the disk's measured rate.",
        "总计之后的前两列是这个步骤的组成部分，在同一次运行中测得：在 Accelerate 钩子里的时间，以及其余部分"
        "（前向传播的计算，以及对从文件映射的权重而言，把它们读进来的缺页）。两者相加等于总计。最后两列是来自别处的参照，"
        "不是组成部分：全内存副本的一个步骤，以及按磁盘实测速率读取每个 token 从磁盘读的字节至少需要的时间。"),
    "place.holds.hooks": W(
        "What holds it back most is Accelerate's hooks: {ms} of {total} ms per token ({share}%) inside "
        "pre_forward/post_forward, block by block ({pct}% of the disk-read bound reached).",
        "最拖慢它的是 Accelerate 的钩子：每个 token {total} ms 中有 {ms} ms（{share}%）花在逐块的 "
        "pre_forward/post_forward 里（达到磁盘读取上限的 {pct}%）。"),
    "place.holds.forward": W(
        "Most of the step is outside the hooks: {ms} of {total} ms per token ({share}%).",
        "这个步骤的大部分时间在钩子之外：每个 token {total} ms 中占 {ms} ms（{share}%）。"),
    "place.holds.ram": W(
        "The all-in-RAM copy's whole step takes {ram} ms: the other {more} ms are reading the offloaded weights in "
        "(page faults on the mapped file) and the work of running block by block.",
        "全内存副本的整个步骤只要 {ram} ms：多出来的 {more} ms 是把卸载的权重读进来（映射文件上的缺页）"
        "以及逐块运行的开销。"),
    "place.holds.disk": W(
        "Reading this step's bytes from the disk takes at least {disk} ms at its measured rate ({pct}% of the "
        "disk-read bound reached).",
        "按磁盘实测速率，从磁盘读这个步骤的字节至少需要 {disk} ms（达到磁盘读取上限的 {pct}%）。"),
    "place.holds.noisy": W(
        "(The all-in-RAM copy, measured in another run, took {ram} ms per token, longer than this step outside "
        "its hooks: the machine's load changed between the runs; run it again for steadier figures.)",
        "（全内存副本在另一次运行中每个 token 用了 {ram} ms，比这次在钩子之外的时间还长："
        "两次运行之间机器负载变了；再运行一次以得到更稳定的数字。）"),
    "place.cliff.title": W("### The cliff: tokens/s as blocks leave RAM", "### 悬崖：块离开内存时的 tokens/s"),
    "place.cliff.intro": W(
        "The loaded model's checkpoint with 0, 1, 2, ... blocks on the disk (the last ones, as Accelerate offloads "
        "from the end): each point a fresh copy loaded with that `device_map`, one warm and one cold run, freed "
        "before the next. Your loaded model stays loaded and unused meanwhile (the copies come from a private copy "
        "of its checkpoint, so RAM holds it and one copy at a time), and other runs wait until the cliff ends. Read "
        "it as: how fast each point decodes (warm: page cache; cold: the disk every token), and the disk-read bound "
        "(the disk's measured rate over the bytes read per token) beside each cold point.",
        "已加载模型的检查点，分别有 0、1、2……个块放在磁盘上（从最后的块开始，和 Accelerate 一样从末尾卸载）："
        "每个点都用对应的 `device_map` 重新加载一份副本，热运行、冷运行各一次，然后释放再测下一个点。"
        "在此期间你已加载的模型保持加载、不被使用（副本来自它检查点的一份私有拷贝，所以内存里同时有它和一份副本），"
        "其他运行要等悬崖测试结束。读法：每个点解码有多快"
        "（热：页缓存；冷：每个 token 都读磁盘），以及每个冷点旁边的磁盘读取上限（磁盘的实测速率除以每个 token 读取的字节数）。"),
    "place.cliff.running": W(
        "⏳ The cliff is running: {points} points, each a copy loaded, run warm and cold, and freed; the plot and the "
        "table appear when the last point is done. Your loaded model stays loaded meanwhile.",
        "⏳ 悬崖测试正在运行：{points} 个点，每个点加载一份副本、热运行和冷运行各一次、再释放；最后一个点完成后显示图和表。"
        "在此期间你已加载的模型保持加载。"),
    "place.cliff.plot": W("Decode tokens/s against blocks on the disk", "解码 tokens/s 与磁盘上块数的关系"),
    "place.axis.blocks": W("blocks on the disk", "磁盘上的块数"),
    "place.axis.rate": W("tokens/s", "每秒 token 数"),
    "place.axis.series": W("run", "运行"),
    "place.series.warm": W("warm (page cache)", "热（页缓存）"),
    "place.series.cold": W("cold (the disk)", "冷（磁盘）"),
    "place.series.bound": W("disk-read bound", "磁盘读取上限"),
    "place.cliff.summary": W(
        "`{model}` in {dtype}: {points} points, {n} greedy tokens after `{prompt}` in every run, in {seconds} s.",
        "`{model}`（{dtype}）：{points} 个点，每次运行都在 `{prompt}` 之后生成 {n} 个贪心 token，共用 {seconds} 秒。"),
    "place.col.off": W("blocks on disk", "磁盘上的块"),
    "place.col.offloaded": W("offloaded", "被卸载"),
    "place.col.warm_rate": W("warm tokens/s", "热 tokens/s"),
    "place.col.cold_rate": W("cold tokens/s", "冷 tokens/s"),
    "place.col.bound": W("disk bound tokens/s", "磁盘上限 tokens/s"),
    "place.col.pct": W("of the bound", "占上限"),
    "place.cliff.same": W(
        "Every run chose the all-in-RAM run's {n} tokens, token for token: offloading moves the weights, not the "
        "arithmetic.",
        "每次运行都选出了与全内存运行相同的 {n} 个 token，逐个相同：卸载只搬运权重，不改变计算。"),
    "place.cliff.differ": W(
        "⚠️ Some runs chose other tokens than the all-in-RAM run (the column says from which token on): the same "
        "weights should give the same greedy tokens, so a difference means the weights that ran were not the same.",
        "⚠️ 有些运行选出的 token 与全内存运行不同（表中写明从第几个开始）：相同的权重应该给出相同的贪心 token，"
        "所以出现差异说明实际运行的权重不一样。"),
    "place.cliff.rate": W("The disk's cold read rate, measured on the last point's offloaded bytes: **{gbps} GB/s** ({read} "
                          "in {ms} ms).",
                          "磁盘的冷读速率，在最后一个点被卸载的字节上测得：**{gbps} GB/s**（{ms} ms 读了 {read}）。"),
    # ---------------------------------------------------------------- load straight vs load then move
    "place.straight.title": W("### Load straight onto the target, or load then move", "### 直接加载到目标，还是先加载再搬运"),
    "place.straight.intro": W(
        "The loaded model's checkpoint, twice: `from_pretrained(..., device_map=device)` puts each weight on the "
        "device as it is read (no CPU copy), against `from_pretrained(...)` then `.to(device)`. On the CPU, where "
        "`.to('cpu')` moves nothing, the same question with the dtype, where a real copy happens. Peak RSS sampled at "
        "100 Hz; the checkpoint read once first, so both find it in the page cache.",
        "把已加载模型的检查点加载两次：`from_pretrained(..., device_map=device)` 在读取时就把每个权重放到设备上"
        "（没有 CPU 副本），对比 `from_pretrained(...)` 之后再 `.to(device)`。在 CPU 上 `.to('cpu')` 什么也不搬，"
        "所以换成数据类型来问同一个问题，那时会真的发生拷贝。峰值 RSS 以 100 Hz 采样；先把检查点读一遍，"
        "让两条路径都从页缓存中读取。"),
    "place.straight.form.dtype": W("`{model}` on the CPU, to {dtype}: loading in it against loading float32 then casting.",
                                   "`{model}` 在 CPU 上转为 {dtype}：直接以它加载，对比先以 float32 加载再转换。"),
    "place.straight.form.device": W("`{model}` onto `{device}` in {dtype}: device_map against .to().",
                                    "`{model}` 以 {dtype} 加载到 `{device}`：device_map 对比 .to()。"),
    "place.col.path": W("path", "路径"),
    "place.col.code": W("what ran", "运行的代码"),
    "place.col.load_s": W("from_pretrained time", "from_pretrained 用时"),
    "place.col.move_s": W(".to() time", ".to() 用时"),
    "place.col.total_s": W("total", "总计"),
    "place.col.peak": W("peak RSS", "峰值 RSS"),
    "place.col.after": W("RSS after", "之后的 RSS"),
    "place.col.vram": W("peak VRAM", "峰值显存"),
    "place.path.straight": W("straight onto", "直接加载"),
    "place.path.then_move": W("load then move", "先加载再搬运"),
    "place.straight.faster": W(
        "Loading straight onto the target was {ratio}× as fast as load-then-move. Peak RSS: {peak_a} against {peak_b}.",
        "直接加载到目标比先加载再搬运快 {ratio} 倍。峰值 RSS：{peak_a} 对比 {peak_b}。"),
    "place.straight.slower": W(
        "Loading straight onto the target was slower here (load-then-move took {ratio}× its time). Peak RSS: "
        "{peak_a} against {peak_b}.",
        "在这里直接加载到目标反而更慢（先加载再搬运只用了它 {ratio} 倍的时间）。峰值 RSS：{peak_a} 对比 {peak_b}。"),
    "place.straight.same": W(
        "The two took about the same time here (within 10%: load-then-move {ratio}× the straight path). Peak RSS: "
        "{peak_a} against {peak_b}.",
        "两者在这里用时差不多（相差 10% 以内：先加载再搬运是直接加载的 {ratio} 倍）。峰值 RSS：{peak_a} 对比 {peak_b}。"),
    "place.straight.same_weights": W("Both paths ended with the same weights, tensor for tensor.",
                                     "两条路径最终得到的权重逐个张量完全相同。"),
    "place.straight.other_weights": W("⚠️ The two paths ended with different weights.", "⚠️ 两条路径最终得到的权重不同。"),
    "place.loadavg": W("Measured at a load average of {load} (timings on a shared machine vary).",
                             "测量时的负载均值为 {load}（共享机器上的计时会有波动）。"),
}
