"""The devices: the table, and why a device is unavailable or what it means."""

from playground.core.i18n.words import W

PREFIXES = ("dev",)

TEXT: dict[str, W] = {
    # devices: why one is unavailable, or what it means
    "dev.threads": W("{n} threads", "{n} 个线程"),
    "dev.auto_gpus": W("places layers over {n} GPU(s), then the CPU", "把各层分布到 {n} 块 GPU 上，然后是 CPU"),
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
}
