"""The devices: the table, and why a device is unavailable or what it means."""

from playground.core.i18n.words import W

PREFIXES = ("dev", "gpurun")

TEXT: dict[str, W] = {
    # devices: why one is unavailable, or what it means
    "dev.threads_default": W("torch threads: {n}", "torch 线程数：{n}"),
    "dev.threads_set": W("torch threads: {n} of {cores} cores (PLAYGROUND_THREADS)", "torch 线程数：{n}，共 {cores} 个核（PLAYGROUND_THREADS）"),
    "dev.threads_local": W(
        "torch threads: {n} of {cores} cores: this server listens only on this machine, so your browser runs on these cores "
        "too, and one is left to it (torch's threads spin at every step and stall when one loses its core; "
        "PLAYGROUND_THREADS sets the count)",
        "torch 线程数：{n}，共 {cores} 个核：这个服务只在本机监听，所以你的浏览器也在这些核上运行，留一个核给它"
        "（torch 的线程在每一步都自旋等待，其中一个失去它的核时整组都会停下；PLAYGROUND_THREADS 可以设置线程数）"),
    "dev.threads_bound": W(
        "{threads}; each thread of a run on a core of its own (OMP_PROC_BIND=true, set by the playground: a new "
        "thread's workers no longer start on its core and wait for it)",
        "{threads}；一次运行的每个线程各占一个核（OMP_PROC_BIND=true，由 playground 设置：新线程的工作线程不再挤在它的核上互相等待）"),
    "dev.auto_gpus": W("places layers over {n} {n?GPU|GPUs}, then the CPU", "把各层分布到 {n} 块 GPU 上，然后是 CPU"),
    "dev.auto_cpu": W("no GPU here: everything is placed on the CPU", "这里没有 GPU：所有层都放在 CPU 上"),
    "dev.no_cuda_build": W("this PyTorch build has no CUDA (a CPU-only wheel)",
                           "这个 PyTorch 版本不含 CUDA（只支持 CPU 的安装包）"),
    "dev.no_cuda_device": W(
        "no CUDA device visible (no GPU, no driver, or CUDA_VISIBLE_DEVICES hides them)",
        "看不到 CUDA 设备（没有 GPU、没有驱动，或 CUDA_VISIBLE_DEVICES 把它们隐藏了）",
    ),
    "dev.no_mps_build": W("this PyTorch build has no MPS (Apple silicon only)",
                          "这个 PyTorch 版本不含 MPS（只在 Apple 芯片上有）"),
    "dev.mps_unavailable": W("MPS built but not available (needs macOS 12.3+ on Apple silicon)",
                             "MPS 已编译但不可用（需要 Apple 芯片上的 macOS 12.3 或更新版本）"),
    "dev.not_found": W("{device} is not among the {kind} devices found", "{device} 不在找到的 {kind} 设备之中"),
    # the devices table
    "dev.col.device": W("device", "设备"),
    "dev.col.state": W("state", "状态"),
    "dev.col.native": W("native", "原生支持"),
    "dev.col.note": W("what it is, and why", "是什么，以及原因"),
    "dev.available": W("✅ available", "✅ 可用"),
    "dev.unavailable": W("⛔ unavailable", "⛔ 不可用"),
    # the prepared GPU run (python -m playground gpu-run): why a step did not run, or ran only its CPU part
    "gpurun.skip.no_gpu": W("needs a CUDA GPU: {why}", "需要 CUDA GPU：{why}"),
    "gpurun.skip.budget": W("not run: the run's {budget} s were spent", "没有运行：本次运行的 {budget} 秒已经用完"),
    "gpurun.timeout": W("stopped after {budget} s, its share of the run's time",
                        "用完了它在本次运行中的 {budget} 秒，已停止"),
    "gpurun.cpu_part": W("its CPU part ran; the GPU part needs a CUDA GPU: {why}",
                         "运行了它在 CPU 上的部分；GPU 部分需要 CUDA GPU：{why}"),
}
