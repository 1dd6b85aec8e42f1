"""The memory ledger: its parts, the counter that read each, the notes where one cannot be read, its table."""

from playground.core.i18n.words import W

PREFIXES = ("ledger",)

TEXT: dict[str, W] = {
    "ledger.title": W("Memory ledger: every byte, each part from its own counter",
                      "内存账本：每个字节，每一部分都来自它自己的计数器"),
    "ledger.after_load": W("after the load", "加载之后"),
    "ledger.after_generation": W("after the generation (the KV cache still held)", "生成之后（KV 缓存仍然保留）"),
    "ledger.col.part": W("part", "部分"),
    "ledger.col.bytes": W("measured", "实测"),
    "ledger.col.counter": W("counter", "计数器"),
    "ledger.col.estimate": W("estimate", "估算"),
    "ledger.col.error": W("error", "误差"),
    "ledger.bar.process": W("this process, part by part (the prefill's peak on top)",
                            "本进程，逐部分（预填充峰值在最上面）"),
    "ledger.bar.device": W("each device: this process, other processes, free", "每个设备：本进程、其他进程、空闲"),
    "ledger.bar.this_process": W("this process", "本进程"),
    "ledger.device.cpu": W("RAM", "内存"),
    "ledger.x": W("MiB", "MiB"),
    "ledger.y": W("device", "设备"),
    "ledger.color": W("part", "部分"),
    "ledger.unknown": W("cannot be read here", "这里读不到"),
    "ledger.sum": W(
        "The measured parts explain {explained} of the {total} this process holds on {device} ({counter}); what "
        "no part explains: {unaccounted} ({pct}).",
        "实测的各部分解释了本进程在{device}上占用的 {total} 中的 {explained}（{counter}）；没有哪一部分能解释的："
        "{unaccounted}（{pct}）。",
    ),
    "ledger.sum_over": W(
        "The measured parts add up to {explained}, {over} more than the {total} this process holds on {device} "
        "({counter}; {pct}): two counters counted some pages both, or read them a moment apart.",
        "实测的各部分加起来是 {explained}，比本进程在{device}上占用的 {total} 多出 {over}（{counter}；{pct}）："
        "有些内存页被两个计数器都算了进去，或者它们读数的时刻稍有先后。",
    ),
    "ledger.total.cpu": W("process RSS, `/proc/self/statm`", "进程 RSS，`/proc/self/statm`"),
    "ledger.total.gpu": W("NVML's figure for this process", "NVML 里本进程的用量"),
    "ledger.total.mps": W("`torch.mps.current_allocated_memory()`", "`torch.mps.current_allocated_memory()` 的读数"),
    "ledger.peak": W("the peak rose {peak} above the parts held now, then fell back",
                     "峰值比现在保留的部分高出 {peak}，之后又降了回去"),
    # the parts (a new part is added here by name, and drawn and listed like the others)
    "ledger.part.runtime": W("runtime: the interpreter's and the libraries' own memory, no model held",
                             "运行时：解释器和各个库自己占用的内存，不含模型"),
    "ledger.part.libraries": W("code and data of the interpreter, torch and the other libraries (mapped files)",
                               "解释器、torch 和其他库的代码与数据（映射的文件）"),
    "ledger.part.cuda_context": W("CUDA context (the driver, kernel images)", "CUDA 上下文（驱动、内核镜像）"),
    "ledger.part.weights": W("weights", "权重"),
    "ledger.part.weights_mapped": W("weights, memory-mapped from the file (resident pages)",
                                    "权重，从文件内存映射（已驻留的页面）"),
    "ledger.part.weights_copied": W("weights, copied into memory PyTorch allocated", "权重，复制到 PyTorch 分配的内存里"),
    "ledger.part.kv_cache": W("KV cache", "KV 缓存"),
    "ledger.part.activations": W("activation peak (prefill)", "激活峰值（预填充）"),
    "ledger.part.others_mapped": W("other models' checkpoints, mapped (other visitors' in the pool; the lab's copy of "
                                   "the bundled model, kept for Break it and the Fact-check)",
                                   "其他模型映射的检查点（池中其他访客的；实验室的自带模型副本，"
                                   "留给“搞坏它”、事实核查）"),
    "ledger.part.others_copied": W("other models' weights, copied (other visitors', in the pool)",
                                   "其他模型复制到内存的权重（池中其他访客的）"),
    "ledger.part.pinned_cache": W("pinned host memory, cached by PyTorch after a `pin_memory=True` copy",
                                  "锁页（pinned）主机内存：`pin_memory=True` 的拷贝之后由 PyTorch 缓存"),
    "ledger.part.allocator_cache": W("allocator cache (reserved, not allocated)", "分配器缓存（已保留、未分配）"),
    "ledger.part.unaccounted": W("unaccounted: what no part explains", "未解释：没有哪一部分能解释的"),
    "ledger.part.other_processes": W("other processes", "其他进程"),
    "ledger.part.cublas_workspace": W("cuBLAS workspaces (kept after the first matrix multiplication)",
                                      "cuBLAS 工作区（第一次矩阵乘法之后一直保留）"),
    "ledger.part.driver_reserved": W("the driver's reserve (NVML reports it apart from used memory)",
                                     "驱动保留的内存（NVML 把它与已用内存分开报告）"),
    "ledger.part.free": W("free", "空闲"),
    # the parts as the bars' legends name them (short: a legend has a line's room)
    "ledger.short.runtime": W("runtime", "运行时"),
    "ledger.short.libraries": W("libraries' code", "库的代码"),
    "ledger.short.cuda_context": W("CUDA context", "CUDA 上下文"),
    "ledger.short.weights": W("weights", "权重"),
    "ledger.short.weights_mapped": W("weights (mapped)", "权重（映射）"),
    "ledger.short.weights_copied": W("weights (copied)", "权重（复制）"),
    "ledger.short.kv_cache": W("KV cache", "KV 缓存"),
    "ledger.short.activations": W("activation peak", "激活峰值"),
    "ledger.short.others_mapped": W("others' mapped", "其他模型（映射）"),
    "ledger.short.others_copied": W("others' copied", "其他模型（复制）"),
    "ledger.short.pinned_cache": W("pinned host memory", "锁页主机内存"),
    "ledger.short.allocator_cache": W("allocator cache", "分配器缓存"),
    "ledger.short.unaccounted": W("unaccounted", "未解释"),
    "ledger.short.other_processes": W("other processes", "其他进程"),
    "ledger.short.cublas_workspace": W("cuBLAS workspaces", "cuBLAS 工作区"),
    "ledger.short.driver_reserved": W("driver's reserve", "驱动保留"),
    "ledger.short.free": W("free", "空闲"),
    # the counters
    "ledger.counter.rss": W("process RSS (`/proc/self/statm`), less the parts above",
                            "进程 RSS（`/proc/self/statm`），减去上面各部分"),
    "ledger.counter.rss_anon_idle": W("`RssAnon` (`/proc/self/status`) read just before from_pretrained, no weights held",
                                      "from_pretrained 之前读到的 `RssAnon`（`/proc/self/status`），不含任何权重"),
    "ledger.counter.smaps_files": W("`/proc/self/smaps`: the resident pages of every mapped file but checkpoints",
                                    "`/proc/self/smaps`：除检查点以外所有映射文件的驻留页面"),
    "ledger.counter.smaps": W("`/proc/self/smaps`: the resident bytes of the checkpoint's mappings",
                              "`/proc/self/smaps`：检查点映射中已驻留的字节"),
    "ledger.counter.storages": W("the tensors' bytes (numel × element size; a quantized weight: of the tensors inside it)",
                                 "张量的字节数（元素个数 × 每个元素的字节数；量化权重按它内部的张量计）"),
    "ledger.counter.cache_object": W("the cache object's key and value tensors", "缓存对象里的键、值张量"),
    "ledger.counter.vmhwm": W("`VmHWM`, the kernel's peak RSS, reset before the prefill",
                              "`VmHWM`，内核记录的 RSS 峰值，在预填充前重置"),
    "ledger.counter.meminfo_free": W("`MemAvailable` in `/proc/meminfo`", "`/proc/meminfo` 的 `MemAvailable`"),
    "ledger.counter.meminfo_others": W("`MemTotal` − `MemAvailable` (`/proc/meminfo`) − this process's RSS",
                                       "`MemTotal` − `MemAvailable`（`/proc/meminfo`）− 本进程 RSS"),
    "ledger.counter.cuda_context": W("memory read around the first CUDA call", "在第一次 CUDA 调用前后读取的内存"),
    "ledger.counter.cuda_allocator": W("`torch.cuda.memory_reserved()` − `memory_allocated()`",
                                       "`torch.cuda.memory_reserved()` 减去 `memory_allocated()`"),
    "ledger.counter.cuda_max_allocated": W("`torch.cuda.max_memory_allocated()`, reset before the prefill",
                                           "`torch.cuda.max_memory_allocated()`，在预填充前重置"),
    "ledger.counter.mem_get_info": W("`torch.cuda.mem_get_info()` (cudaMemGetInfo)", "`torch.cuda.mem_get_info()`（即 cudaMemGetInfo）"),
    "ledger.counter.nvml_process": W("NVML's per-process figure for this process, less the parts above",
                                     "NVML 里本进程的用量，减去上面各部分"),
    "ledger.counter.nvml_others": W("NVML's device-wide used less this process's", "NVML 整个设备的用量减去本进程的"),
    "ledger.counter.cuda_host_allocator": W("`torch.cuda.host_memory_stats()`: the pinned blocks PyTorch's host "
                                            "allocator holds, in use or cached",
                                            "`torch.cuda.host_memory_stats()`：PyTorch 主机分配器持有的锁页内存块"
                                            "（正在使用的和缓存的）"),
    "ledger.counter.cublas_workspace": W("`torch.cuda.memory_allocated()` growth across a first matmul, results freed "
                                         "(read with the CUDA context)",
                                         "第一次矩阵乘法前后 `torch.cuda.memory_allocated()` 的增长，结果已释放"
                                         "（与 CUDA 上下文一起读取）"),
    "ledger.counter.nvml_reserved": W("`reserved` of NVML's memory information, version 2 (`nvmlMemory_v2`)",
                                      "NVML 内存信息第 2 版（`nvmlMemory_v2`）中的 `reserved`"),
    "ledger.counter.mps_allocator": W("`torch.mps.driver_allocated_memory()`, `current_allocated_memory()`",
                                      "`torch.mps.driver_allocated_memory()` 和 `current_allocated_memory()`"),
    "ledger.counter.mps_recommended": W("`torch.mps.recommended_max_memory()` − `driver_allocated_memory()`",
                                        "`torch.mps.recommended_max_memory()` 减去 `driver_allocated_memory()`"),
    "ledger.counter.pool_storages": W("the tensor bytes of the other models this process holds, not in their checkpoint's mapping",
                                      "本进程持有的其他模型中不在检查点映射里的张量字节数"),
    "ledger.counter.live_tensors": W("the most bytes of tensors alive at once, counted op by op (TorchDispatchMode)",
                                     "同一时刻存活张量的最大字节数，逐个算子统计（TorchDispatchMode）"),
    # why a part cannot be read, or what its number covers
    "ledger.note.mapped": W("{mapped} of the weights lie in the mapping, {resident} of it resident: a page is "
                            "read from the file the first time a forward pass touches it",
                            "权重中有 {mapped} 位于映射中，其中 {resident} 已驻留：前向计算第一次用到某一页时才从文件读入"),
    "ledger.note.no_hwm": W("the kernel's peak RSS cannot be reset here (`/proc/self/clear_refs`)",
                            "这里无法重置内核的 RSS 峰值（`/proc/self/clear_refs`）"),
    "ledger.note.no_peak": W("{device} keeps no peak counter", "{device} 没有峰值计数器"),
    "ledger.note.nvml_pids": W(
        "NVML lists {n} processes on this GPU, none with this process's id {pid}: inside a container NVML "
        "gives host PIDs, so this process cannot be told from the others",
        "NVML 在这块 GPU 上列出了 {n} 个进程，没有一个是本进程的 id {pid}：在容器里 NVML 给出的是宿主机的 PID，"
        "所以分不清本进程和其他进程",
    ),
    "ledger.note.nvml_not_this": W(
        "NVML lists this process's id {pid} with {used}, less than the {reserved} its allocator alone holds: inside a "
        "container that figure is 0, or another process's under a host id equal to this one, so this process "
        "cannot be told from the others",
        "NVML 给本进程的 id {pid} 列出 {used}，比它的分配器单独持有的 {reserved} 还少：在容器里这个数字是 0，"
        "或者是宿主机上恰好同一个 id 的另一个进程的，所以分不清本进程和其他进程",
    ),
    "ledger.note.nvml_v1": W(
        "only NVML's version 1 answers here (an older driver): its used memory counts the driver's reserve, "
        "which therefore shows among the other processes",
        "这里只有 NVML 第 1 版能回答（驱动较旧）：它的已用内存包含驱动保留的内存，所以这部分会算进其他进程里",
    ),
    "ledger.note.no_nvml": W("needs NVML (the nvidia-ml-py package and a driver)", "需要 NVML（nvidia-ml-py 包和驱动）"),
    "ledger.note.context_unmeasured": W(
        "the CUDA context existed before the playground could measure it (its first CUDA call came first)",
        "CUDA 上下文在 playground 能测量之前就已存在（它的第一次 CUDA 调用更早）",
    ),
    "ledger.note.negative": W("negative: the parts explain more than the process holds (memory held at the idle "
                              "reading has been freed since)",
                              "为负：各部分解释的比进程实际占用的还多（空闲时读到的内存后来被释放了）"),
    "ledger.note.no_idle": W("no reading with no model held", "没有不含模型时的读数"),
    "ledger.note.no_smaps": W("`/proc/self/smaps` cannot be read here (Linux only)", "这里读不到 `/proc/self/smaps`（只有 Linux 有）"),
    "ledger.note.no_cache": W("this engine keeps no cache: it recomputes every position", "这个引擎不保留缓存：每一步都重算所有位置"),
    "ledger.note.not_dynamic": W("this model's cache is not a DynamicCache: its bytes are not read",
                                 "这个模型的缓存不是 DynamicCache：没有读取它的字节数"),
    "ledger.note.activations": W(
        "the peak's rise over the prefill ({rise}), less what stayed: the prompt's share of the cache ({kv}) and "
        "the weights' pages read in from the file meanwhile ({paged})",
        "预填充期间峰值的增长（{rise}），减去留下来的部分：提示词在缓存中的份额（{kv}）和这期间从文件读入的权重页面（{paged}）",
    ),
    "ledger.note.kv_tokens": W("{tokens} tokens in the cache", "缓存中有 {tokens} 个 token"),
}
