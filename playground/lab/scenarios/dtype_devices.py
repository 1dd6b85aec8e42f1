"""Dtype mistakes that depend on the library or the device: a quantized model given to Accelerate's offload hooks
(raised live by torchao here), bfloat16 reported as supported on a GPU that only emulates it, float64 on Apple's
MPS (both simulated, labelled, with the installed torch's own code and words).
"""

from __future__ import annotations

from pathlib import Path

import torch
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode

from playground.core.i18n import W, said
from playground.hw import devices
from playground.lab.harness import Lab, attempt_script, mark, row, run_fix, scenario
from playground.lab.library_text import call_templates
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script
from playground.load import quantize

TRANSFORMERS_MODELING = Path(transformers.__file__).parent / "modeling_utils.py"
# where the installed torch words what an Apple GPU raises for float64 (its test suite quotes the message)
TORCH_MPS_NOTE = Path(torch.__file__).parent / "testing" / "_internal" / "common_methods_invocations.py"


def bitsandbytes_wording() -> str:
    """What Transformers raises when a bitsandbytes 4-bit or 8-bit model is cast to another dtype, from the installed
    Transformers' own source ('' where it has no such message)."""
    try:
        return next((t for t in call_templates(TRANSFORMERS_MODELING) if "cast a bitsandbytes model" in t), "")
    except (OSError, SyntaxError):
        return ""


@scenario(
    "quantized-offloaded", 34,
    title=W("A torchao-quantized model handed to Accelerate's offload hooks",
            "把 torchao 量化过的模型交给 Accelerate 的卸载钩子"),
    explain=W(
        "`quantize_` swapped each nn.Linear's weight for a torchao tensor subclass (int8 values, a float32 scale per "
        "row). `cpu_offload` keeps the weights in RAM and, before each layer runs, a hook brings its weight in with "
        "`.to()`. Under `inference_mode`, as generation runs, that call reaches the quantized tensor as "
        "`aten.to.dtype`, which torchao does not implement, and it refuses in its own words. A quantized model is "
        "small: keep it whole on one device (`model.to(device)` moves torchao's int8 tensors). Transformers words "
        "the same family for bitsandbytes models, shown below as a GPU machine with bitsandbytes prints it.",
        "`quantize_` 把每个 nn.Linear 的权重换成了 torchao 的张量子类（int8 数值，每行一个 float32 缩放因子）。"
        "`cpu_offload` 把权重留在内存里，每层运行前由钩子用 `.to()` 把权重搬进来。"
        "在 `inference_mode` 下（生成时就是这样运行的），这个调用以 `aten.to.dtype` 的形式落到量化张量上，"
        "torchao 没有实现它，于是用自己的话拒绝。量化后的模型很小：整个放在一个设备上"
        "（`model.to(device)` 能搬动 torchao 的 int8 张量）。Transformers 对 bitsandbytes 模型的同类报错，"
        "按装有 bitsandbytes 的 GPU 机器打印的样子显示在下面。",
    ),
    before="quantize_(model, Int8WeightOnlyConfig())\ncpu_offload(model, execution_device=device)",
    after="quantize_(model, Int8WeightOnlyConfig())\nmodel.to(device)   # small now: one device, no hooks",
    expect=Outcome(NotImplementedError, r"Tensor dispatch: attempting to run unimplemented operator/function"),
    group="dtype",
    bundled_only=True,
    script=Script("lm", imports="from accelerate import cpu_offload\n"
                                "from torchao.quantization import quantize_, Int8WeightOnlyConfig", broken="""
quantize_(model, Int8WeightOnlyConfig())          # each nn.Linear's weight: int8 values (GPT-2: its lm_head)
cpu_offload(model, execution_device=device)       # weights kept in RAM, brought in by a hook before each layer
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix="""
quantize_(model, Int8WeightOnlyConfig())          # each nn.Linear's weight: int8 values (GPT-2: its lm_head)
model.to(device)                                  # small now: kept whole on one device, no hooks to move it
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())), "|", type(model.lm_head.weight).__name__)
"""),
    words={
        "bnb": W("What Transformers raises on a GPU machine with bitsandbytes when a 4-bit or 8-bit model is cast to "
                 "another dtype, from the installed Transformers' source (not run here: bitsandbytes needs a GPU): {text}",
                 "装有 bitsandbytes 的 GPU 机器上，把 4 位或 8 位模型转换成其他数据类型时 Transformers 抛出的消息，"
                 "取自已安装的 Transformers 源码（这里没有运行：bitsandbytes 需要 GPU）：{text}"),
    },
)
def quantized_offloaded(lab: Lab, r: BreakResult) -> None:
    quantize.torchao()  # imported quietly first: the script's import then finds it loaded
    lines: list[str] = []
    with quantize.quiet(lines):
        ns = attempt_script(lab, quantized_offloaded, r)
    if "model" in ns:
        head = ns["model"].get_output_embeddings().weight
        r.tensors = [row("lm_head.weight", head)]
    bnb = bitsandbytes_wording()
    if bnb:
        r.notes.append(said("scenario.quantized-offloaded.bnb", text=bnb))
    with quantize.quiet(lines):
        run_fix(lab, quantized_offloaded, r)


@scenario(
    "bf16-emulated", 35,
    title=W("bfloat16 chosen on a GPU that only emulates it", "在只能模拟 bfloat16 的 GPU 上选了 bfloat16"),
    explain=W(
        "`torch.cuda.is_bf16_supported()` returns True on a GPU with native bfloat16 (compute capability 8.0 and "
        "newer: Ampere, Ada, Hopper) and also, since it checks whether a bfloat16 tensor can be created at all "
        "(`including_emulation=True` by default), on older ones (a T4 or a V100, 7.x), where bfloat16 has no "
        "tensor-core path and runs slower than float16. Nothing raises. Ask for native support "
        "(`including_emulation=False`) and pick float16 where it is absent.",
        "`torch.cuda.is_bf16_supported()` 在原生支持 bfloat16 的 GPU（计算能力 8.0 及以上：Ampere、Ada、Hopper）上返回 True；"
        "而因为它检查的是能否创建 bfloat16 张量（默认 `including_emulation=True`），在更老的 GPU（T4、V100，7.x）上也返回 True，"
        "那里的 bfloat16 没有张量核心路径，比 float16 慢。不会报错。请询问是否原生支持"
        "（`including_emulation=False`），不支持就选 float16。",
    ),
    before="dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16",
    after="native = torch.cuda.is_bf16_supported(including_emulation=False)\n"
          "dtype = torch.bfloat16 if native else torch.float16",
    expect={"simulated": Outcome(None), "cuda": Outcome(None)},
    group="dtype",
    silent=True,
    needs_gpu=True,
    real_on=("cuda",),
    labels={
        "gpu": W("the GPU asked", "被询问的 GPU"),
        "compute_capability": W("its compute capability", "它的计算能力"),
        "is_bf16_supported": W("what torch.cuda.is_bf16_supported() answers", "torch.cuda.is_bf16_supported() 的回答"),
        "is_bf16_supported_native": W("what it answers with including_emulation=False",
                                      "传入 including_emulation=False 时的回答"),
    },
    script=Script("lm", broken="""
on_gpu = torch.cuda.is_available()
dtype = torch.bfloat16 if on_gpu and torch.cuda.is_bf16_supported() else torch.float32   # True on a T4 too
model = model.to(device, dtype)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
print("chose", dtype, "on", device, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix="""
on_gpu = torch.cuda.is_available()
native_bf16 = on_gpu and torch.cuda.is_bf16_supported(including_emulation=False)   # tensor cores for bfloat16
dtype = torch.bfloat16 if native_bf16 else torch.float16 if on_gpu else torch.float32
model = model.to(device, dtype)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
print("chose", dtype, "on", device, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
"""),
    words={
        "simulation": W(
            "On a simulated Tesla T4 (compute capability 7.5): the installed torch's own "
            "`torch.cuda.is_bf16_supported` was run with its CUDA queries answered as a T4 answers them; nothing "
            "else was patched. Nothing raises on a real T4 either: the cost is speed.",
            "在模拟的 Tesla T4（计算能力 7.5）上：运行的是已安装 torch 自己的 `torch.cuda.is_bf16_supported`，"
            "只是它的 CUDA 查询按 T4 的答案回答；别的都没有改动。在真实的 T4 上也不会报错：代价是速度。",
        ),
    },
)
def bf16_emulated(lab: Lab, r: BreakResult) -> None:
    if lab.run.target.simulated:
        mark(lab, r, "scenario.bf16-emulated.simulation", "")
        r.measured = dict(gpu="Tesla T4 (simulated)", compute_capability="7.5",
                          is_bf16_supported=devices.bf16_supported_on(7, 5, "Tesla T4"),
                          is_bf16_supported_native=devices.bf16_supported_on(7, 5, "Tesla T4", including_emulation=False))
    else:
        mark(lab, r)
        gpu = devices.parse_device(lab.run.target.device)
        index = devices.cuda_index(gpu.id)
        r.measured = dict(gpu=gpu.name, compute_capability=gpu.capability,
                          is_bf16_supported=devices.bf16_supported(index),
                          is_bf16_supported_native=devices.bf16_supported(index, including_emulation=False))
    run_fix(lab, bf16_emulated, r)


def mps_float64_wording() -> str:
    """What an Apple GPU raises for a float64 tensor, as the installed torch's test suite quotes it ('' if absent)."""
    try:
        text = TORCH_MPS_NOTE.read_text(encoding="utf-8")
    except OSError:
        return ""
    key = "TypeError: Cannot convert a MPS Tensor to float64"
    at = text.find(key)
    return text[at + len("TypeError: "): text.find("\n", at)].strip() if at != -1 else ""


@scenario(
    "mps-float64", 36,
    title=W("float64 sent to Apple's MPS", "把 float64 送到 Apple 的 MPS 上"),
    explain=W(
        "The MPS backend has no float64. NumPy makes float64 by default, so a tensor made from a NumPy array "
        "(`torch.from_numpy`, `torch.tensor(array)`) is float64 and cannot go to `mps`. Convert it to float32 on "
        "the CPU first: `torch.from_numpy(a).float().to('mps')`, or `.to('mps', torch.float32)`.",
        "MPS 后端没有 float64。NumPy 默认生成 float64，所以由 NumPy 数组得到的张量"
        "（`torch.from_numpy`、`torch.tensor(array)`）是 float64，不能移到 `mps`。"
        "先在 CPU 上转成 float32：`torch.from_numpy(a).float().to('mps')`，或者 `.to('mps', torch.float32)`。",
    ),
    before="scale = torch.from_numpy(np.linspace(0.5, 1.0, 4)).to(device)    # float64",
    after="scale = torch.from_numpy(np.linspace(0.5, 1.0, 4)).float().to(device)",
    expect={"simulated": Outcome(None), "mps": Outcome(TypeError, r"float64")},
    group="dtype",
    needs_gpu=True,
    real_on=("mps",),
    wording_only=True,
    labels={"fake_mps_float64": W("a fake float64 tensor on mps was created (the simulation cannot refuse it)",
                                  "在伪造的 mps 上创建了 float64 张量（模拟无法拒绝它）")},
    script=Script("bare", imports="import numpy as np",
                  setup='device = "mps" if torch.backends.mps.is_available() else device   # an Apple GPU where there is one',
                  broken="""
weights = np.linspace(0.5, 1.0, 4)                 # NumPy's default: float64
scale = torch.from_numpy(weights).to(device)       # float64 on the device: an Apple GPU (mps) refuses it
print("scale", scale.dtype, "on", scale.device)
""", fix="""
weights = np.linspace(0.5, 1.0, 4)                 # NumPy's default: float64
scale = torch.from_numpy(weights).float().to(device)   # float32 first: every device has it
print("scale", scale.dtype, "on", scale.device)
"""),
    words={
        "simulation": W(
            "Simulated: this machine has no Apple GPU, and PyTorch's fake tensors accept float64 on a fake mps "
            "device without complaint, so nothing here can raise it. The message below is what a Mac raises, in the "
            "installed torch's own words.",
            "模拟：这台机器没有 Apple GPU，而 PyTorch 的伪张量在伪造的 mps 设备上照样接受 float64，"
            "所以这里没有任何东西能触发它。下面的消息是 Mac 上会抛出的，用的是已安装 torch 自己的措辞。",
        ),
        "how": W("read from the installed torch's test suite (torch/testing/_internal/common_methods_invocations.py), "
                 "which quotes what an Apple GPU raises", "读自已安装 torch 的测试套件"
                 "（torch/testing/_internal/common_methods_invocations.py），其中引用了 Apple GPU 抛出的消息"),
    },
)
def mps_float64(lab: Lab, r: BreakResult) -> None:
    if not lab.run.target.simulated:  # a real Mac: the script's own text, live
        mark(lab, r)
        attempt_script(lab, mps_float64, r, device="mps")
    else:
        mark(lab, r, "scenario.mps-float64.simulation", "")
        with FakeTensorMode():
            fake = torch.ones(4, dtype=torch.float64, device="mps")
        r.tensors = [row("scale", fake)]
        r.measured = dict(fake_mps_float64=fake.dtype == torch.float64)
        wording = mps_float64_wording()
        if wording:
            r.real_gpu_message, r.real_gpu_how = wording, said("scenario.mps-float64.how")
    run_fix(lab, mps_float64, r, device=lab.run.target.device if not lab.run.target.simulated else "cpu")


SCENARIOS = (quantized_offloaded, bf16_emulated, mps_float64)
