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
        "实测的各部分解释了本进程在 {device} 上占用的 {total} 中的 {explained}（{counter}）；没有哪一部分能解释的："
        "{unaccounted}（{pct}）。",
    ),
    "ledger.total.cpu": W("process RSS, `/proc/self/statm`", "进程 RSS，`/proc/self/statm`"),
    "ledger.total.gpu": W("NVML's figure for this process", "NVML 里本进程的用量"),
    "ledger.total.mps": W("`torch.mps.current_allocated_memory()`", "`torch.mps.current_allocated_memory()` 的读数"),
    "ledger.peak": W("the peak rose {peak} above the parts held now, then fell back",
                     "峰值比现在保留的部分高出 {peak}，之后又降了回去"),
    # the parts (a new part is added here by name, and drawn and listed like the others)
    "ledger.part.runtime": W("runtime: the interpreter, torch and every library, no model held",
                             "运行时：解释器、torch 和所有库，不含模型"),
    "ledger.part.cuda_context": W("CUDA context (the driver, kernel images)", "CUDA 上下文（驱动、内核镜像）"),
    "ledger.part.weights": W("weights", "权重"),
    "ledger.part.weights_mapped": W("weights, memory-mapped from the file (resident pages)",
                                    "权重，从文件内存映射（已驻留的页面）"),
    "ledger.part.weights_copied": W("weights, copied into memory PyTorch allocated", "权重，复制到 PyTorch 分配的内存里"),
    "ledger.part.kv_cache": W("KV cache", "KV 缓存"),
    "ledger.part.activations": W("activation peak (prefill)", "激活峰值（预填充）"),
    "ledger.part.allocator_cache": W("allocator cache (reserved, not allocated)", "分配器缓存（已保留、未分配）"),
    "ledger.part.unaccounted": W("unaccounted: what no part explains", "未解释：没有哪一部分能解释的"),
    "ledger.part.other_processes": W("other processes", "其他进程"),
    "ledger.part.free": W("free", "空闲"),
    # the counters
    "ledger.counter.rss": W("process RSS (`/proc/self/statm`), less the parts above",
                            "进程 RSS（`/proc/self/statm`），减去上面各部分"),
    "ledger.counter.rss_idle": W("RSS read just before from_pretrained, no weights held",
                                 "from_pretrained 之前读到的 RSS，不含任何权重"),
    "ledger.counter.smaps": W("`/proc/self/smaps`: the resident bytes of the checkpoint's mappings",
                              "`/proc/self/smaps`：检查点映射中已驻留的字节"),
    "ledger.counter.storages": W("the tensors' bytes (numel × element size)", "张量的字节数（元素个数 × 每个元素的字节数）"),
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
    "ledger.counter.mps_allocator": W("`torch.mps.driver_allocated_memory()`, `current_allocated_memory()`",
                                      "`torch.mps.driver_allocated_memory()` 和 `current_allocated_memory()`"),
    "ledger.counter.mps_recommended": W("`torch.mps.recommended_max_memory()` − `driver_allocated_memory()`",
                                        "`torch.mps.recommended_max_memory()` 减去 `driver_allocated_memory()`"),
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
    "ledger.note.no_nvml": W("needs NVML (the nvidia-ml-py package and a driver)", "需要 NVML（nvidia-ml-py 包和驱动）"),
    "ledger.note.context_unmeasured": W(
        "the CUDA context existed before the playground could measure it (its first CUDA call came first)",
        "CUDA 上下文在 playground 能测量之前就已存在（它的第一次 CUDA 调用更早）",
    ),
    "ledger.note.no_idle": W("no reading with no model held", "没有不含模型时的读数"),
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
