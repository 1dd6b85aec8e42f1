"""Device mistakes in inference: inputs, the model or one block left on the wrong device.

Each runs on the scenario's device target (see the harness): a GPU where there is one, else
PyTorch's fake `cuda:0`, labelled simulated, with the message a real GPU raises beside the fake
tensors' (`playground.lab.gpu_wording`). The fixes run the fix scripts.
"""

from __future__ import annotations

import torch

from playground.core.i18n import W
from playground.lab import gpu_wording
from playground.lab.capture import attempt
from playground.lab.harness import Lab, blocks, expect_device_error, greedy, mark, name_of, row, run_fix, scenario
from playground.lab.inspect import inspect
from playground.lab.outcome import GPU_MEETS_CPU
from playground.lab.result import BreakResult
from playground.lab.scripts import Script


def real_gpu(r: BreakResult, op: str, arg: str, arg_device: str, common_device: str) -> None:
    """Beside a simulated device mismatch: what a real GPU raises there, with the installed torch."""
    built = gpu_wording.same_device(op, arg, arg_device, common_device) if r.simulated and r.raised else None
    if built:
        r.real_gpu_message, r.real_gpu_how = built


FORWARD_FIX = """
model = model.to(device)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(model.device)   # the inputs follow the model
with torch.inference_mode():
    logits = model(input_ids).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())), "| logits on", logits.device)
"""


@scenario(
    "inputs-on-cpu", 1,
    title=W("Inputs left on the CPU, model on the GPU",
            "输入留在 CPU 上，模型在 GPU 上"),
    explain=W(
        "The model's weights were moved to the GPU, but the token ids came from the tokenizer on the CPU "
        "and were never moved. The very first operator, the embedding lookup, needs its weight and its "
        "indices on the same device, so PyTorch stops and names both devices. Move the inputs with the "
        "model: `inputs.to(model.device)`.",
        "模型的权重已经移到 GPU，但 token id 是分词器在 CPU 上生成的，从没移动过。"
        "第一个算子——词嵌入查表——要求权重和索引在同一设备上，于是 PyTorch 停下来，"
        "并写出两个设备的名字。让输入跟着模型走：`inputs.to(model.device)`。",
    ),
    before="""
model = model.to("cuda")
input_ids = tokenizer(prompt, return_tensors="pt").input_ids
logits = model(input_ids).logits
""",
    after="""
model = model.to("cuda")
input_ids = tokenizer(prompt, return_tensors="pt").input_ids
input_ids = input_ids.to(model.device)
logits = model(input_ids).logits
""",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="device",
    script=Script("lm", broken="""
model = model.to(device)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids   # made on the CPU, never moved
with torch.inference_mode():
    logits = model(input_ids).logits    # on a GPU: cuda weights meet cpu token ids in the embedding
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix=FORWARD_FIX),
)
def inputs_on_cpu(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    emb = name_of(src, src.get_input_embeddings().weight)
    model = lab.run.place(src)
    mark(lab, r)
    r.tensors = [row("input_ids", lab.ids), row(emb, model.get_input_embeddings().weight)]
    with lab.run.running():
        attempt(r, lambda: greedy(model, lab.ids))
    expect_device_error(lab, r)
    # a real CUDA embedding looks up its ids with index_select, whose generated wrapper checks the devices
    real_gpu(r, "index_select", "index", "cpu", lab.run.target.device)
    run_fix(lab, inputs_on_cpu, r)


@scenario(
    "model-on-cpu", 2,
    title=W("Inputs moved to the GPU, model never moved",
            "输入移到了 GPU，模型却从没移动"),
    explain=W(
        "The inputs were sent to the GPU, but `model.to(device)` was never called, so every weight is "
        "still in CPU memory. The embedding lookup meets a CPU weight and GPU indices and refuses. Move "
        "the model once, after loading, and the inputs on every call.",
        "输入被送到了 GPU，但从没调用 `model.to(device)`，"
        "所以每个权重都还在 CPU 内存里。词嵌入查表遇到 CPU 上的权重和 GPU 上的索引，拒绝执行。"
        "加载后把模型移动一次，每次调用时移动输入。",
    ),
    before="""
model = AutoModelForCausalLM.from_pretrained(path)
input_ids = input_ids.to("cuda")
logits = model(input_ids).logits
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path)
model = model.to("cuda")
input_ids = input_ids.to("cuda")
logits = model(input_ids).logits
""",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="device",
    script=Script("lm", broken="""
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)   # the inputs were moved...
with torch.inference_mode():
    logits = model(input_ids).logits    # ...the model never was: on a GPU, cpu weights meet cuda ids
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix=FORWARD_FIX),
)
def model_on_cpu(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    emb = name_of(src, src.get_input_embeddings().weight)
    ids = lab.run.place(lab.ids)
    mark(lab, r)
    r.tensors = [row("input_ids", ids), row(emb, src.get_input_embeddings().weight)]
    with lab.run.running():
        attempt(r, lambda: greedy(src, ids))
    expect_device_error(lab, r)
    # the weight (cpu) comes first in index_select's check
    real_gpu(r, "index_select", "index", lab.run.target.device, "cpu")
    run_fix(lab, model_on_cpu, r)


@scenario(
    "block-left-behind", 3,
    title=W("Model moved only in part: one transformer block left behind",
            "模型只移动了一部分：落下了一个 Transformer 块"),
    explain=W(
        "All of the model went to the GPU except one transformer block (here transformer.h.0, as happens "
        "when layers are moved one by one and one is missed, or a custom placement forgets a module). "
        "The hidden states arrive on the GPU and the block's first operator finds its weight on the CPU. "
        "The Inspect view flags the row that differs. Move the whole model with one `model.to(device)`, "
        "or let Accelerate place it with `device_map`.",
        "除了一个 Transformer 块（这里是 transformer.h.0），"
        "整个模型都去了 GPU——逐层移动时漏掉一层，或者自定义放置忘了某个模块，就会这样。"
        "隐藏状态在 GPU 上到达，这个块的第一个算子却发现自己的权重在 CPU 上。"
        "“检查”视图会标出不一致的那一行。用一次 `model.to(device)` 移动整个模型，"
        "或者让 Accelerate 用 `device_map` 来放置。",
    ),
    before="""
for name, child in model.transformer.named_children():
    if name != "h":
        child.to("cuda")
for block in model.transformer.h[1:]:   # h[0] forgotten
    block.to("cuda")
model.lm_head.to("cuda")
""",
    after="""
model = model.to("cuda")   # one call moves every parameter and buffer
# or let Accelerate place it:
# model = AutoModelForCausalLM.from_pretrained(path, device_map="auto")
""",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="device",
    script=Script("lm", broken="""
for name, child in model.transformer.named_children():   # GPT-2: wte, wpe, drop, h, ln_f
    if name != "h":
        child.to(device)
for block in model.transformer.h[1:]:                     # h[0] forgotten
    block.to(device)
model.lm_head.to(device)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits    # on a GPU: cuda hidden states meet h[0]'s cpu LayerNorm
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix="""
model = model.to(device)   # one call moves every parameter and buffer, whatever the architecture
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(model.device)
placed = {p.device for p in model.parameters()} | {b.device for b in model.buffers()}
print("devices the model's tensors are on:", placed)
with torch.inference_mode():
    logits = model(input_ids).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
assert len(placed) == 1
"""),
)
def block_left_behind(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    blocks_name, mods = blocks(src)
    left = f"{blocks_name}.0"
    first = lambda m, i: next(m.get_submodule(f"{blocks_name}.{i}").named_parameters())
    model, ids = lab.run.place(src, left_behind=left), lab.run.place(lab.ids)
    mark(lab, r)
    (n0, p0), (n1, p1) = first(model, 0), first(model, 1)
    r.tensors = [row("input_ids", ids), row(f"{left}.{n0}", p0), row(f"{blocks_name}.1.{n1}", p1)]
    r.flagged_modules = inspect(model).flagged
    with lab.run.running():
        attempt(r, lambda: greedy(model, ids))
    expect_device_error(lab, r)
    first = next(m for m in src.get_submodule(left).modules() if next(m.parameters(recurse=False), None) is not None)
    if isinstance(first, torch.nn.LayerNorm):  # a real CUDA LayerNorm checks input, weight, bias in that order
        real_gpu(r, "native_layer_norm", "weight", "cpu", lab.run.target.device)
    run_fix(lab, block_left_behind, r)


SCENARIOS = (inputs_on_cpu, model_on_cpu, block_left_behind)
