"""Device mistakes in single calls: a convolution fed a CPU input, generate() given inputs on another device.

Neither is raised by a CPU alone. The convolution runs on the scenario's device target (a GPU, or
fake `cuda:0`; where this PyTorch's fake convolution skips its type check, the same check is tripped
with a dtype); generate() meets Transformers' own device check on input_ids placed on the target
(a GPU, or the meta device: another device type, with no data), and is stopped there.
"""

from __future__ import annotations

import copy
import warnings

import torch
import transformers

from playground.core.i18n import W, said
from playground.lab import gpu_wording, messages
from playground.lab.capture import attempt, frames
from playground.lab.library_text import generate_device_lines
from playground.lab.harness import Lab, call_generate, convolve, mark, name_of, row, run_fix, scenario
from playground.lab.outcome import MPS_PLACEHOLDER, Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script

GENERATE_WARNING = r"You are calling \.generate\(\) with the `input_ids` being on a device type different"
CONV_TYPES = r"Input type \(.+\) and weight type \(.+\) should be the same"


@scenario(
    "conv-devices", 9,
    title=W("A convolution whose input and weight live on different devices",
            "卷积的输入和权重在不同设备上"),
    explain=W(
        "Causal LMs never raise this one; a small `nn.Conv2d` does. For a float32 batch of more than one image "
        "made on the CPU, PyTorch picks the CPU's oneDNN path by the input alone, and that path checks, before any "
        "work, that the input and the weight have the same tensor type (device and dtype together), naming both. "
        "(With a single image it picks another path, where the dispatcher's device check fails first and names "
        "the two devices instead: measured on an H200.) Either way, move the input to the layer's device and "
        "dtype: `x.to(conv.weight.device, conv.weight.dtype)`.",
        "因果语言模型从不会抛出这个错误；一个小的 `nn.Conv2d` 会。对在 CPU 上创建的、多于一张图的 float32 批次，"
        "PyTorch 只根据输入选择 CPU 的 oneDNN 路径，这条路径在计算之前检查输入和权重的张量类型"
        "（设备和数据类型一起）是否相同，并写出两种类型。（只有一张图时它走另一条路径，"
        "调度器的设备检查先失败，写出的是两个设备：在 H200 上实测。）无论哪种，都把输入移到这一层的设备和数据类型上："
        "`x.to(conv.weight.device, conv.weight.dtype)`。",
    ),
    before="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to("cuda")
x = torch.randn(2, 3, 32, 32)
y = conv(x)
""",
    after="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to("cuda")
x = torch.randn(2, 3, 32, 32)
y = conv(x.to(conv.weight.device, conv.weight.dtype))
""",
    needs_gpu=True,
    # the type check names both tensor types: here (the simulation's fallback) two CPU dtypes; on a GPU
    # "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same" (NOTES.md;
    # built from libtorch_cpu.so by gpu_wording.conv_types); MPS names MPSFloatType, or the placeholder
    expect={kind: Outcome(RuntimeError, CONV_TYPES) for kind in ("simulated", "cuda")}
    | {"mps": Outcome(RuntimeError, f"{CONV_TYPES}|{MPS_PLACEHOLDER}")},
    group="device",
    script=Script("bare", broken="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to(device)
x = torch.randn(2, 3, 32, 32)          # two images, made on the CPU
with torch.no_grad():
    y = conv(x)                        # on a GPU: a cpu input, a cuda weight
print("y:", tuple(y.shape), y.dtype, "on", y.device)
""", fix="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to(device)
x = torch.randn(2, 3, 32, 32)
with torch.no_grad():
    y = conv(x.to(conv.weight.device, conv.weight.dtype))   # the input follows the layer
print("y:", tuple(y.shape), y.dtype, "on", y.device)
"""),
    words={
        "simulation": W(
            "This machine has no GPU, and PyTorch's fake tensors skip the convolution's type check. "
            "That check compares the input's and the weight's whole tensor type, device and dtype together, so "
            "here the input stays float32 and the weight is bfloat16: the same check fires with its own message "
            "(on oneDNN's path, which PyTorch takes for the script's float32 batch of two images, whatever the "
            "CPU's instructions). "
            "On a GPU the parenthesis names the CPU and CUDA types (a CPU float tensor and a cuda float tensor) "
            "instead of two CPU dtypes. The fixed run below happens on the CPU.",
            "这台机器没有 GPU，而 PyTorch 的伪张量会跳过卷积的类型检查。"
            "这个检查把输入和权重的完整张量类型（设备和数据类型一起）做比较，所以这里输入保持 float32、"
            "权重是 bfloat16：同一个检查用它自己的消息报错"
            "（在 oneDNN 的路径中：脚本的输入是两张图的 float32 批次，无论 CPU 有哪些指令，PyTorch 都走这条路径）。在 GPU 上，"
            "括号里写的是 CPU 类型和 CUDA 类型（CPU 的 float 张量与 cuda 的 float 张量），"
            "而不是两种 CPU 数据类型。下面修复后的流程在 CPU 上运行。",
        ),
    },
)
def conv_devices(lab: Lab, r: BreakResult) -> None:
    gen = torch.Generator().manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, kernel_size=3, bias=False)
    x = torch.randn(2, 3, 32, 32, generator=gen)  # two images: the oneDNN path, whose type check names both types
    placed = lab.run.place(conv)
    mark(lab, r)
    r.tensors = [row("x", x), row("conv.weight", placed.weight)]
    with lab.run.running():
        attempt(r, lambda: convolve(placed, x))
    if r.simulated and not r.raised:
        # a limit of the simulation: this PyTorch's fake convolution skips the type check (it returns a
        # result); trip the same check with a dtype difference instead, on the CPU. The CPU runs that check
        # only on oneDNN's path, which it takes for a float32 input of two images or more (a bfloat16 input
        # takes it only where the CPU has bfloat16 instructions: elsewhere slow_conv2d words a dtype clash
        # its own way), so the input stays float32 and the weight is bfloat16.
        xb, conv_b = x, copy.deepcopy(conv).to(torch.bfloat16)
        r.tensors = [row("x", xb), row("conv.weight", conv_b.weight)]
        with torch.no_grad():
            attempt(r, lambda: convolve(conv_b, xb))
        mark(lab, r, "scenario.conv-devices.simulation", "", device="cpu")
    # the real message names the legacy tensor types: a fake cuda tensor knows its own
    built = gpu_wording.conv_types(x.type(), placed.weight.type()) if r.simulated and r.raised else None
    if built:
        r.real_gpu_message, r.real_gpu_how = built
    run_fix(lab, conv_devices, r)


LABELS = {
    "transformers": W("Transformers version", "Transformers 版本"),
    "warns_when": W("when generate() warns (the installed source)", "generate() 何时发出警告（已安装的源码）"),
    "moves_inputs": W("where it moves the forward's inputs (the installed source)",
                      "它在哪里移动前向传播的输入（已安装的源码）"),
}


@scenario(
    "generate-device-type", 10,
    title=W("generate() called with input_ids on a different device type than the model",
            "调用 generate() 时 input_ids 与模型的设备类型不同"),
    explain=W(
        "Nothing fails. Before generating, Transformers compares the device type of `input_ids` with the "
        "model's (types only: cuda:1 against cuda:0 passes) and warns when they differ and the inputs are "
        "not on the CPU. Then, from Transformers 5.23, `prepare_inputs_for_generation` copies the forward's "
        "inputs to the model's device before every forward pass, so generation succeeds: on a GPU host the cost "
        "is the warning and a copy per token. Transformers 5.17 does not copy them: after the warning, the first "
        "forward raises the embedding's device mismatch (the note below says what the installed version does). "
        "Inputs on the CPU with a model on a GPU do not even warn: "
        "Transformers supports them on purpose. (A direct `model(input_ids)` call moves nothing and "
        "raises: see the first two mistakes.) Move the inputs to `model.device` once, before generate().",
        "不会报错。生成之前，Transformers 比较 `input_ids` 和模型的设备类型（只比较类型："
        "cuda:1 对 cuda:0 不会触发），两者不同且输入不在 CPU 上时发出警告。"
        "之后从 Transformers 5.23 起，`prepare_inputs_for_generation` 在每次前向传播前把前向传播的输入复制到模型所在设备，"
        "所以生成会成功：在有 GPU 的机器上，代价是这条警告和每个 token 一次复制。"
        "Transformers 5.17 不会复制它们：警告之后，第一次前向传播就抛出嵌入层的设备不匹配"
        "（下面的说明写出已安装的版本怎么做）。"
        "输入在 CPU、模型在 GPU 时甚至不会警告：Transformers 有意支持这种情况。"
        "（直接调用 `model(input_ids)` 不会移动任何东西，会报错：见前两个错误。）"
        "在 generate() 之前，把输入一次性移到 `model.device`。",
    ),
    before="""
model = AutoModelForCausalLM.from_pretrained(path)          # stays on the CPU
inputs = tokenizer(prompt, return_tensors="pt").to("cuda")
output = model.generate(**inputs, max_new_tokens=8)
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path).to("cuda")
inputs = tokenizer(prompt, return_tensors="pt").to(model.device)
output = model.generate(**inputs, max_new_tokens=8)
""",
    needs_gpu=True,
    silent=True,
    # nothing raised; Transformers' warning names the inputs' device type (transformers/generation/utils.py)
    expect={kind: Outcome(None, warning=GENERATE_WARNING + rf".*`input_ids` is on {dev}, whereas the model is on cpu")
            for kind, dev in (("simulated", "meta"), ("cuda", "cuda"), ("mps", "mps"))},
    stand_in="meta",
    group="device",
    labels=LABELS,
    script=Script("lm", broken="""
inputs = tokenizer(prompt, return_tensors="pt").to(device)             # on a GPU host: cuda:0
output = model.generate(**inputs, max_new_tokens=8, do_sample=False)    # the model stayed on the CPU
print(repr(tokenizer.decode(output[0])), "| output on", output.device)
""", fix="""
model = model.to(device)
inputs = tokenizer(prompt, return_tensors="pt").to(model.device)       # the inputs follow the model
output = model.generate(**inputs, max_new_tokens=8, do_sample=False)
print(repr(tokenizer.decode(output[0])), "| output on", output.device)
"""),
    words={
        "simulation": W(
            "With the meta device: this machine has no GPU, and generate() cannot run on fake tensors "
            "(it reads token values to decide when to stop). Transformers' own generate() ran with input_ids on "
            "meta, a real second device type that holds shapes but no data, so its device-type check fired and "
            "printed the warning above, live (it names meta where a GPU host names cuda: see below). The run was "
            "stopped at that check, because meta tensors hold no tokens to generate from; the special token ids "
            "were unset on a shallow copy of the model so that it reached the check first. Run as a file on a GPU "
            "host, the broken script prints the warning; what follows depends on the Transformers version (the "
            "note below).",
            "用 meta 设备：这台机器没有 GPU，而 generate() 不能在伪张量上运行（它要读取 token 的值来决定何时停止）。"
            "Transformers 自己的 generate() 以放在 meta 上的 input_ids 运行；meta 是真实的第二种设备类型，"
            "只有形状没有数据，所以它的设备类型检查触发，实时打印了上面的警告"
            "（这里写的是 meta，有 GPU 的机器上写的是 cuda：见下面）。运行在这个检查处被停下，"
            "因为 meta 张量里没有可供生成的 token；我们在模型的浅拷贝上取消了特殊 token 的 id，"
            "让它先到达这个检查。在有 GPU 的机器上把出错的脚本作为文件运行，会先打印警告；"
            "接下来发生什么取决于 Transformers 的版本（见下面的说明）。",
        ),
        "stopped": W("Stopped at the check: {frame}", "在检查处停下：{frame}"),
        "moves": W(
            "Transformers {version}, installed here, copies the forward's inputs to the model's device before each "
            "forward pass (`{line}`): on a GPU host the broken script warns, then generates. Transformers 5.17 "
            "did not: there its first forward raised the embedding's index_select device mismatch after the warning.",
            "这里安装的 Transformers {version} 在每次前向传播前把前向传播的输入复制到模型所在设备（`{line}`）："
            "在有 GPU 的机器上，出错的脚本先警告，然后照样生成。Transformers 5.17 不会这样做："
            "在那里，警告之后第一次前向传播就抛出嵌入层 index_select 的设备不匹配。",
        ),
        "stays": W(
            "Transformers {version}, installed here, does not copy the forward's inputs to the model's device: on a "
            "GPU host the broken script warns, then its first forward raises the embedding's index_select device "
            "mismatch. From Transformers 5.23 they are copied, and generation succeeds.",
            "这里安装的 Transformers {version} 不会把前向传播的输入复制到模型所在设备：在有 GPU 的机器上，"
            "出错的脚本先警告，然后第一次前向传播就抛出嵌入层 index_select 的设备不匹配。"
            "从 Transformers 5.23 起它们会被复制，生成也会成功。",
        ),
        "gpu_template": W(
            "The warning's template in the installed Transformers (`{source}`), filled in as a GPU host fills it: "
            "input_ids on cuda, the model on cpu.",
            "已安装的 Transformers 中这条警告的模板（`{source}`），按有 GPU 的机器的情况填入：input_ids 在 cuda，模型在 cpu。",
        ),
    },
)
def generate_device_type(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    r.measured = {"transformers": transformers.__version__, **generate_device_lines()}
    mask = lab.mask if lab.mask is not None else torch.ones_like(lab.ids)
    # The broken script's setting: the model on the CPU, its inputs on the target (a GPU, or meta). The
    # run is stopped at Transformers' check (its warning turned into an exception for this call only),
    # the same way on a GPU: meta holds no data, so generate() could go no further there. The special
    # token ids are unset on a shallow copy (same weights) for the same reason: generate() reads them
    # before the check; and the attention mask stays on the CPU (generate() reads its values too).
    shallow = copy.copy(src)
    cfg = copy.deepcopy(src.generation_config)
    cfg.eos_token_id = cfg.bos_token_id = cfg.pad_token_id = None
    object.__setattr__(shallow, "generation_config", cfg)
    ids = lab.run.place(lab.ids)
    r.tensors = [row("input_ids", ids), row(name_of(src, src.get_input_embeddings().weight),
                                            src.get_input_embeddings().weight)]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=GENERATE_WARNING)  # for this call: stop at the check
        try:
            call_generate(shallow, ids, mask, max_new_tokens=8, do_sample=False)
        except UserWarning as w:
            r.warnings.append(str(w))
            r.notes.append(said("scenario.generate-device-type.stopped", frame=frames(w)[1] or ""))
        except Exception as e:  # the check was not reached: say what stopped it; no exception as the mistake's
            r.cannot_run = said("sim.cannot_run", error_type=type(e).__name__, raised_in=frames(e)[1] or "",
                                message=str(e)[:300])
    mark(lab, r, "scenario.generate-device-type.simulation", "")
    # what follows the warning on a GPU host depends on the version: the installed source says which it is
    r.notes.append(said("scenario.generate-device-type.moves", version=transformers.__version__,
                        line=r.measured["moves_inputs"].split(": ", 1)[-1]) if r.measured["moves_inputs"] else
                   said("scenario.generate-device-type.stays", version=transformers.__version__))
    template = next((e for e in messages.catalog() if e.kind == "generate"), None)
    if r.simulated and template is not None and r.warnings:  # as a GPU host prints it: model on cpu, inputs on cuda
        r.real_gpu_message = template.text.replace("{}", "cuda", 1).replace("{}", "cpu")
        r.real_gpu_how = said("scenario.generate-device-type.gpu_template", source=template.source)
    run_fix(lab, generate_device_type, r)


SCENARIOS = (conv_devices, generate_device_type)
