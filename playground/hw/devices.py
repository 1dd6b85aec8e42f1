"""Devices and dtypes: what this machine can run on, and what each choice costs.

`discover()` lists the devices (`DeviceInfo`: cpu, each cuda:N, mps); `parse_device` and
`parse_dtype` check a choice; `best`, `recommended_dtype` and `hint` advise; `sync` waits for a
device's queued work, and every timer calls it before reading `time.perf_counter()`. Everything
that touches a GPU API lives here, so the rest runs the same on a CPU-only box.
See docs/hardware.md.
"""

from __future__ import annotations

import contextlib
import functools
import platform
import re
import types
from dataclasses import asdict, dataclass

import torch

from playground.core.errors import UserError, shown
from playground.core.i18n import Said, as_text, said
from playground.hw import busy, cpu_threads, openmp, zerogpu

DTYPES = ("float32", "float16", "bfloat16", "auto", "int8", "int4")
TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Weights quantized after loading (torchao, weight-only: playground/load/quantize.py); loaded in QUANTIZED_BASE,
# which the rest of the model and the activations keep.
QUANTIZED = ("int8", "int4")
QUANTIZED_BASE = torch.float32
# A dtype as the inner code takes it: a torch.dtype, "auto" (keep the checkpoint's own), or a QUANTIZED name.
Dtype = torch.dtype | str


@dataclass
class DeviceInfo:
    """One entry of the device picker: usable or not, and why."""

    id: str  # "cpu", "cuda:0", "mps", "auto"
    kind: str  # "cpu", "cuda", "mps", "auto"
    available: bool
    name: str
    reason: Said | None = None  # why it is unavailable, or a note on what it means
    total_memory: int | None = None  # bytes, GPUs only
    bf16: bool | None = None  # native bfloat16 support
    fp16: bool | None = None  # native float16 support
    capability: str | None = None  # CUDA compute capability "8.6"

    def to_dict(self) -> dict:
        return as_text(asdict(self))


@functools.lru_cache(maxsize=1)
def cpu_name() -> str:
    """The CPU model string (from /proc/cpuinfo on Linux), for reports."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """Instruction-set flags of this CPU (empty where /proc/cpuinfo is absent). Read once:
    they cannot change while the process runs, and every device check asks."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_native_fp16(flags: set[str] | None = None) -> bool:
    """Does this CPU do float16 arithmetic natively?

    x86 needs AVX512-FP16 (Sapphire Rapids) or AMX-FP16; ARM has it from ARMv8.2
    (`fphp`/`asimdhp`, every Apple M chip). Without it, PyTorch converts each
    float16 operand to float32 and back: correct results, several times slower.
    """
    flags = cpu_flags() if flags is None else flags
    return bool(flags & {"avx512_fp16", "amx_fp16", "fphp", "asimdhp"})


def cpu_native_bf16(flags: set[str] | None = None) -> bool:
    """bfloat16 is fast on a CPU only with AVX512-BF16 or AMX-BF16 (or ARM's bf16)."""
    flags = cpu_flags() if flags is None else flags
    return bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})


def _threads_reason(c: cpu_threads.Choice, bound: openmp.Binding | None = None) -> Said:
    """How many threads torch's kernels use here, and why (PLAYGROUND_THREADS, a core left to the browser); and,
    where the entry point bound OpenMP's workers and a run's team has two or more threads, that each has a core."""
    count = said(f"dev.threads_{c.why}", n=c.threads, cores=c.cores)
    bound = openmp.BOUND if bound is None else bound
    return said("dev.threads_bound", threads=count) if bound and bound.bound and c.threads >= 2 else count


def discover() -> list[DeviceInfo]:
    """Every device the picker lists, available or not, each with its reason."""
    flags = cpu_flags()
    out = [
        DeviceInfo(
            id="cpu", kind="cpu", available=True, name=cpu_name(),
            bf16=cpu_native_bf16(flags), fp16=cpu_native_fp16(flags),
            reason=_threads_reason(cpu_threads.current(busy.cores())),
        )
    ]
    out.extend(_cuda_devices())
    out.append(_mps_device())
    n_cuda = sum(1 for d in out if d.kind == "cuda" and d.available)
    out.append(
        DeviceInfo(
            id="auto", kind="auto", available=True, name="Accelerate device_map='auto'",
            reason=said("dev.auto_gpus", n=n_cuda) if n_cuda else said("dev.auto_cpu"),
        )
    )
    return out


def _cuda_devices() -> list[DeviceInfo]:
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        return [DeviceInfo(id="cuda", kind="cuda", available=False, name="CUDA",
                           reason=said("dev.no_cuda_build"))]
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return [DeviceInfo(id="cuda", kind="cuda", available=False, name="CUDA",
                           reason=said("dev.no_cuda_device"))]
    out = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        major, minor = props.major, props.minor
        out.append(
            DeviceInfo(
                id=f"cuda:{i}", kind="cuda", available=True, name=props.name,
                total_memory=props.total_memory,
                bf16=major >= 8,  # Ampere and newer have bf16 tensor cores
                fp16=True, capability=f"{major}.{minor}",
            )
        )
    return out


def no_cuda_reason() -> Said | None:
    """Why no CUDA device can be used here (None when one can): the build, or no device visible."""
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        return said("dev.no_cuda_build")
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return said("dev.no_cuda_device")
    return None


def _mps_device() -> DeviceInfo:
    mps = getattr(torch.backends, "mps", None)
    if mps is None or not mps.is_built():
        return DeviceInfo(id="mps", kind="mps", available=False, name="Apple MPS",
                          reason=said("dev.no_mps_build"))
    if not mps.is_available():
        return DeviceInfo(id="mps", kind="mps", available=False, name="Apple MPS",
                          reason=said("dev.mps_unavailable"))
    return DeviceInfo(id="mps", kind="mps", available=True, name="Apple MPS", fp16=True, bf16=True)


def parse_device(device: object, devices: list[DeviceInfo] | None = None) -> DeviceInfo:
    """What a visitor typed as a device, as a usable DeviceInfo (one discovery), or a UserError saying why not."""
    devices = devices if devices is not None else discover()
    usable = ", ".join(d.id for d in devices if d.available)
    if not isinstance(device, str) or not device.strip():
        raise UserError.of("err.device_none", usable=usable)
    device = device.strip()
    if not re.fullmatch(r"cpu|mps|auto|cuda(:\d{1,3})?", device):
        raise UserError.of("err.device_name", device=shown(device, 40), usable=usable)
    if device == "cuda":
        device = "cuda:0"  # PyTorch's "cuda" means the current device, 0 unless changed
    for d in devices:
        if d.id == device and d.available:
            return d
    kind = device.split(":")[0]
    absent = next((d for d in devices if d.kind == kind and not d.available), None)
    reason = absent.reason if absent else said("dev.not_found", device=device, kind=kind)
    raise UserError.of("err.device_absent", device=device, reason=reason, usable=usable)


def parse_dtype(dtype: object) -> Dtype:
    """A dtype name as the torch.dtype it names, or "auto" (keep the checkpoint's own)."""
    if not isinstance(dtype, str) or dtype.strip() not in DTYPES:
        raise UserError.of("err.dtype", dtype=shown(dtype, 40), dtypes=", ".join(DTYPES))
    name = dtype.strip()
    return name if name == "auto" or name in QUANTIZED else TORCH_DTYPES[name]


def load_dtype(dtype: Dtype) -> Dtype:
    """The dtype from_pretrained is given: QUANTIZED_BASE for a quantized dtype (quantized after loading), else
    the dtype itself."""
    return QUANTIZED_BASE if dtype in QUANTIZED else dtype


def best(devices: list[DeviceInfo] | None = None) -> DeviceInfo:
    """The device a first run uses when none is named: the first GPU, then Apple's MPS, then the CPU."""
    devices = devices if devices is not None else discover()
    for kind in ("cuda", "mps", "cpu"):
        found = next((d for d in devices if d.kind == kind and d.available), None)
        if found is not None:
            return found
    raise RuntimeError("no CPU device")  # discover() always lists an available CPU


def recommended_dtype(device: DeviceInfo) -> torch.dtype:
    """The dtype a first run uses on `device` when none is named: half the bytes where the hardware computes
    it natively (bfloat16 on a GPU with bf16 tensor cores or a CPU with AVX512-BF16/AMX, float16 on older
    GPUs and MPS), float32 otherwise (a CPU without native 16-bit math runs it emulated, slower)."""
    if device.kind == "cuda":
        return torch.bfloat16 if device.bf16 else torch.float16
    if device.kind == "mps":
        return torch.float16
    return torch.bfloat16 if cpu_native_bf16() else torch.float32


def dtype_name(dtype: Dtype) -> str:
    """torch.bfloat16 -> "bfloat16"; "auto" stays "auto"."""
    return dtype if isinstance(dtype, str) else str(dtype).removeprefix("torch.")


def hint(device: DeviceInfo, dtype: Dtype) -> Said | None:
    """A note on what this (device, dtype) pair costs, or None if nothing is known."""
    on_cpu = device.kind == "cpu" or (device.kind == "auto" and not torch.cuda.is_available())
    if on_cpu:
        if dtype == torch.float16 and not cpu_native_fp16():
            return said("hint.fp16_cpu_slow")  # no native fp16: converted to float32 internally
        if dtype == torch.bfloat16:
            return said("hint.bf16_cpu_native" if cpu_native_bf16() else "hint.bf16_cpu_emulated")
    if device.kind == "cuda":
        if dtype == torch.bfloat16 and device.bf16 is False:
            return said("hint.bf16_gpu_old", name=device.name, capability=device.capability)  # pre-Ampere
        if dtype == torch.float32:
            return said("hint.fp32_gpu")
    if device.kind == "mps" and dtype == torch.bfloat16:
        return said("hint.bf16_mps")
    if dtype == "auto":
        return said("hint.auto")
    if dtype in QUANTIZED:
        return said("hint.quantized", dtype=dtype)
    return None


def sync(device: str | torch.device | None) -> None:
    """Wait until all queued work on `device` has finished (no-op on the CPU).

    CUDA and MPS calls are asynchronous: without this, a timer would stop while
    kernels are still running and report an impossibly short time.
    """
    if zerogpu.active() and not zerogpu.in_gpu_call():
        return  # ZeroGPU's main process has emulated CUDA only: no real work queued, no device to ask (inside a
        # @spaces.GPU call, in the worker that holds the GPU, CUDA is real and its work is waited for)
    kind = torch.device(device).type if device not in (None, "auto") else None
    if kind == "cuda":
        torch.cuda.synchronize(torch.device(device))  # the named GPU (synchronize() alone waits for the current one)
    elif device == "auto" and torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):  # Accelerate may have placed layers on every GPU
            torch.cuda.synchronize(i)
    elif kind == "mps":
        torch.mps.synchronize()


def cuda_count() -> int:
    """How many CUDA devices this process can use (0 without a CUDA build, a driver or a visible device)."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


PLACES = ("auto", "disk", "mixed")  # names a placement uses that are not torch devices


def kind_of(device: str | torch.device | None) -> str:
    """A device's kind: "cpu", "cuda", "mps", "meta", or one of PLACES ("auto": Accelerate's choice, unresolved;
    "disk": its tier; "mixed": a block over several). The one place a device's name is parsed: "cuda:1" ->
    "cuda", torch.device("cpu") -> "cpu"."""
    if device is None:
        return "cpu"
    text = str(device)
    if text in PLACES:
        return text
    return torch.device(text).type


def cuda_index(device: str | torch.device | None) -> int | None:
    """The ordinal of a CUDA device ("cuda" and "cuda:0" -> 0, "cuda:3" -> 3), None for any other device."""
    if device is None or str(device) in PLACES:
        return None
    d = torch.device(str(device))
    return (d.index or 0) if d.type == "cuda" else None


def name(device: torch.device | str) -> str:
    """A device as the ledger and the location name it: "cpu" (RAM), "cuda:N" (the index always written), "mps",
    "meta"; Accelerate's places ("disk", "mixed") stay as they are."""
    if str(device) in PLACES:
        return str(device)
    d = torch.device(device)
    return f"cuda:{d.index or 0}" if d.type == "cuda" else d.type


@contextlib.contextmanager
def cudnn_attention(enabled: bool):
    """Scaled dot-product attention with cuDNN's backend allowed (or not) while the block runs: process-wide, the
    setting before it restored after."""
    was = torch.backends.cuda.cudnn_sdp_enabled()
    torch.backends.cuda.enable_cudnn_sdp(enabled)
    try:
        yield
    finally:
        torch.backends.cuda.enable_cudnn_sdp(was)


# PyTorch's SDPA prefers cuDNN's attention for float16 and bfloat16 on Hopper GPUs. cuDNN builds an execution graph
# for each new shape and PyTorch caches it per thread (aten/src/ATen/native/cudnn/MHA.cpp, `thread_local`: cuDNN's
# plans are not guaranteed thread-safe). This server generates in a fresh thread per request and every decode step
# is a new length, so each token paid a graph build: on an H200 the page's float16 and bfloat16 decode ran at 24
# tokens/s against bare Transformers' 330 on a warm thread (docs/gpu.md). The flash and memory-efficient backends
# build nothing per shape and decoded as fast as cuDNN's warm one, so cuDNN's is off in this process, for the
# playground's runs and the bench's bare side alike. A flag only: no CUDA call, nothing changes on a CPU.
torch.backends.cuda.enable_cudnn_sdp(False)


def torch_device_of(model: torch.nn.Module) -> torch.device:
    """Where a model's first parameter lives (what Transformers' `model.device` reports)."""
    return next(model.parameters()).device


def bf16_supported(index: int, including_emulation: bool = True) -> bool:
    """`torch.cuda.is_bf16_supported` for cuda:`index` (True on pre-Ampere GPUs too unless `including_emulation`
    is False: it checks that a bfloat16 tensor can be made)."""
    with torch.cuda.device(index):
        return torch.cuda.is_bf16_supported(including_emulation=including_emulation)


def bf16_supported_on(major: int, minor: int, name: str, including_emulation: bool = True) -> bool:
    """The installed `torch.cuda.is_bf16_supported`'s own code run against a described GPU (compute capability
    `major`.`minor`, where a bfloat16 tensor can be created, as on every CUDA GPU): its globals replaced for this
    call only, nothing patched process-wide. What a T4 (7.5) answers, asked on a machine without one."""
    real = torch.cuda.is_bf16_supported
    gpu = types.SimpleNamespace(major=major, minor=minor, name=name)
    described = types.SimpleNamespace(version=types.SimpleNamespace(hip=None), cuda=types.SimpleNamespace(
        current_device=lambda: 0, get_device_properties=lambda _d=None: gpu))
    scope = {**real.__globals__, "torch": described, "is_available": lambda: True,
             "_check_bf16_tensor_supported": lambda _d: True}
    return types.FunctionType(real.__code__, scope, real.__name__, real.__defaults__, real.__closure__)(
        including_emulation)
