"""An out-of-memory message read to its numbers: its bar's parts, its wording, the remedies its numbers point at."""

from playground.core.i18n.words import W

PREFIXES = ("oom",)

TEXT: dict[str, W] = {
    "oom.title": W("The out-of-memory message's own numbers", "内存不足报错自带的数字"),
    "oom.read": W("Read from: {kind}", "读自：{kind}"),
    "oom.kind.cuda": W("CUDA's message, PyTorch 2.x wording", "CUDA 的报错，PyTorch 2.x 的措辞"),
    "oom.kind.cuda_1x": W("CUDA's message, PyTorch 1.x wording", "CUDA 的报错，PyTorch 1.x 的措辞"),
    "oom.kind.xpu": W("Intel XPU's message, PyTorch 2.x wording", "Intel XPU 的报错，PyTorch 2.x 的措辞"),
    "oom.kind.xpu_1x": W("Intel XPU's message, the older wording of Intel's extension (IPEX)",
                         "Intel XPU 的报错，Intel 扩展（IPEX）较早的措辞"),
    "oom.kind.mps": W("the MPS allocator's message", "MPS 分配器的报错"),
    "oom.kind.cpu": W("PyTorch's CPU allocator (the operating system refused)", "PyTorch 的 CPU 分配器（操作系统拒绝了）"),
    "oom.summary": W(
        "{device} was asked for {requested} more; {free} was free out of {total}.",
        "{device} 又被要求分配 {requested}；总共 {total}，空闲 {free}。",
    ),
    "oom.summary_no_free": W("{device} was asked for {requested} more, out of {total}; the message gives no free figure.",
                             "{device} 又被要求分配 {requested}，总共 {total}；报错没有给出空闲量。"),
    "oom.summary_cpu": W("The operating system refused {requested} for one tensor.",
                         "操作系统拒绝为一个张量分配 {requested}。"),
    "oom.note_1x": W(
        "PyTorch 1.x gives no figure for the process: what is neither PyTorch's nor free (the CUDA context, "
        "other processes) is counted as one.",
        "PyTorch 1.x 的报错不给出进程的用量：既不属于 PyTorch 也不空闲的部分（CUDA 上下文、其他进程）合在一起算。",
    ),
    "oom.processes": W("Processes the message lists: {list}", "报错列出的进程：{list}"),
    "oom.col.part": W("part", "部分"),
    "oom.col.bytes": W("bytes", "字节数"),
    "oom.remedies": W("What these numbers point at", "这些数字指向的办法"),
    "oom.x": W("MiB", "MiB"),
    "oom.y": W("device", "设备"),
    "oom.color": W("part", "部分"),
    # the bar's parts
    "oom.part.requested": W("the failed request", "失败的请求"),
    "oom.part.allocated": W("allocated by PyTorch", "PyTorch 已分配"),
    "oom.part.allocator_cache": W("PyTorch's cache (reserved, unallocated)", "PyTorch 的缓存（已保留、未分配）"),
    "oom.part.non_pytorch": W("rest of this process", "本进程的其余部分"),
    "oom.part.other_processes": W("other processes", "其他进程"),
    "oom.part.free": W("free", "空闲"),
    # the remedies
    "oom.fix.expandable": W(
        "PyTorch's cache holds {cache} it cannot hand out in one piece: fragmentation. Set "
        "`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` before the process starts (older PyTorch: "
        "`max_split_size_mb:128`); `torch.cuda.empty_cache()` only hands the cache back to other processes.",
        "PyTorch 的缓存里有 {cache}，却拿不出连续的一整块：这是碎片化。在进程启动前设置 "
        "`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`（旧版 PyTorch 用 `max_split_size_mb:128`）；"
        "`torch.cuda.empty_cache()` 只会把缓存还给其他进程。",
    ),
    "oom.fix.fragmented": W(
        "{free} was free on {device}, more than the {requested} asked for, yet it failed: the free memory is not "
        "in one piece, or another process took it meanwhile.",
        "{device} 上空闲 {free}，比请求的 {requested} 还多，却还是失败了：空闲内存不是连续的一整块，"
        "或者其间被另一个进程拿走了。",
    ),
    "oom.fix.others": W(
        "Other processes hold {others} of {device}: see them with `nvidia-smi` (or Activity Monitor on a Mac) and "
        "stop the ones you can, or pick another GPU with `CUDA_VISIBLE_DEVICES`.",
        "其他进程占着 {device} 上的 {others}：用 `nvidia-smi`（Mac 上用活动监视器）看看是哪些，"
        "能停的就停掉，或者用 `CUDA_VISIBLE_DEVICES` 换一块 GPU。",
    ),
    "oom.fix.context": W(
        "One request this large is usually activations or a KV cache: shorten the context, lower the batch size or "
        "`max_new_tokens` (the estimate panel's 'Will it fit?' finds the longest context that fits).",
        "这么大的单次请求通常是激活值或 KV 缓存：缩短上下文，减小批大小或 `max_new_tokens`"
        "（估算面板的“放得下吗？”会找出能放下的最长上下文）。",
    ),
    "oom.fix.dtype": W(
        "PyTorch's tensors fill most of the device: load the weights in bfloat16 or float16 (half of float32), "
        "or a smaller model.",
        "PyTorch 的张量占满了设备的大部分：用 bfloat16 或 float16 加载权重（只有 float32 的一半），或者换个小一点的模型。",
    ),
    "oom.fix.offload": W(
        "What PyTorch holds plus this request is more than the device has: offload layers to the CPU or disk "
        "(`device_map='auto'` with `max_memory`, `offload_folder`), at a cost in speed.",
        "PyTorch 已占用的加上这次请求超过了设备的容量：把一些层卸载到 CPU 或磁盘"
        "（`device_map='auto'` 配合 `max_memory`、`offload_folder`），代价是变慢。",
    ),
    "oom.fix.watermark": W(
        "MPS stops at its high-water limit ({allowed}), below the Mac's RAM: free memory (close other apps), or "
        "raise the limit with `PYTORCH_MPS_HIGH_WATERMARK_RATIO` at the risk of swapping the whole system.",
        "MPS 在它的高水位上限（{allowed}）处停止，低于 Mac 的内存总量：腾出内存（关掉其他应用），"
        "或者用 `PYTORCH_MPS_HIGH_WATERMARK_RATIO` 提高上限，但可能让整个系统开始换页。",
    ),
    "oom.fix.cpu_size": W(
        "The operating system would not give {requested} for a single tensor: check its shape (an attention matrix "
        "over a long sequence grows with its square) before anything else.",
        "操作系统不肯为单个张量分配 {requested}：先检查它的形状（长序列上的注意力矩阵随长度的平方增长）。",
    ),
}
