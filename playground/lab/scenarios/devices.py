"""Device mistakes: inputs, a model or one block left on the wrong device; a convolution; generate().

On a host without a GPU these run on PyTorch's fake `cuda:0` (see the harness) and are labelled simulated.
"""

from __future__ import annotations

import copy
from dataclasses import asdict

import torch

from playground.core.i18n import W
from playground.lab.capture import attempt, fix
from playground.lab.harness import (FAKE, NEW_TOKENS, Lab, blocks, call_generate, convolve, expect_device_error,
                                    fake_copy, generate_fixed, greedy, name_of, row, scenario, simulated)
from playground.lab.inspect import inspect
from playground.lab.result import BreakResult


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
)
def inputs_on_cpu(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    emb = name_of(src, src.get_input_embeddings().weight)
    if lab.gpu:
        model = copy.deepcopy(src).to("cuda:0")
        r.device = "cuda:0"
        r.tensors = [row("input_ids", lab.ids), row(emb, model.get_input_embeddings().weight)]
        with torch.inference_mode():
            attempt(r, lambda: greedy(model, lab.ids))
        fix(r, generate_fixed(lab, model, lab.ids.to(model.device)), "cuda:0")
        return
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    model = fake_copy(src, mode)
    simulated(r)
    r.tensors = [row("input_ids", lab.ids), row(emb, model.get_input_embeddings().weight)]
    with mode, torch.no_grad():
        attempt(r, lambda: greedy(model, lab.ids))
    expect_device_error(r)
    fix(r, generate_fixed(lab, src, lab.ids))


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
)
def model_on_cpu(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    emb = name_of(src, src.get_input_embeddings().weight)
    if lab.gpu:
        ids = lab.ids.to("cuda:0")
        r.device = "cuda:0"
        r.tensors = [row("input_ids", ids), row(emb, src.get_input_embeddings().weight)]
        with torch.inference_mode():
            attempt(r, lambda: greedy(src, ids))
        model = copy.deepcopy(src).to("cuda:0")
        fix(r, generate_fixed(lab, model, ids), "cuda:0")
        return
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        ids = mode.from_tensor(lab.ids).to(FAKE)
    simulated(r)
    r.tensors = [row("input_ids", ids), row(emb, src.get_input_embeddings().weight)]
    with mode, torch.no_grad():
        attempt(r, lambda: greedy(src, ids))
    expect_device_error(r)
    fix(r, generate_fixed(lab, src, lab.ids))


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
)
def block_left_behind(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    blocks_name, mods = blocks(src)
    left = f"{blocks_name}.0"
    first = lambda m, i: next(m.get_submodule(f"{blocks_name}.{i}").named_parameters())
    if lab.gpu:
        model = copy.deepcopy(src).to("cuda:0")
        model.get_submodule(left).to("cpu")
        ids, r.device = lab.ids.to("cuda:0"), "cuda:0"
    else:
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode(allow_non_fake_inputs=True)
        model = fake_copy(src, mode, FAKE, left_behind=left)
        with mode:
            ids = mode.from_tensor(lab.ids).to(FAKE)
        simulated(r)
    (n0, p0), (n1, p1) = first(model, 0), first(model, 1)
    r.tensors = [row("input_ids", ids), row(f"{left}.{n0}", p0), row(f"{blocks_name}.1.{n1}", p1)]
    r.flagged_modules = inspect(model).flagged
    if lab.gpu:
        with torch.inference_mode():
            attempt(r, lambda: greedy(model, ids))
        model.to("cuda:0")
        fix(r, generate_fixed(lab, model, ids), "cuda:0")
        return
    with mode, torch.no_grad():
        attempt(r, lambda: greedy(model, ids))
    expect_device_error(r)
    fix(r, generate_fixed(lab, src, lab.ids))


@scenario(
    "conv-devices", 9,
    title=W("A convolution whose input and weight live on different devices",
            "卷积的输入和权重在不同设备上"),
    explain=W(
        "Causal LMs never raise this one; a small `nn.Conv2d` does. The convolution checks, before any "
        "work, that its input and its weight have the same tensor type (device and dtype together), and "
        "names both types when they differ. Move the input to the layer's device and dtype: "
        "`x.to(conv.weight.device, conv.weight.dtype)`.",
        "因果语言模型从不会抛出这个错误；一个小的 `nn.Conv2d` 会。"
        "卷积在计算之前检查输入和权重的张量类型（设备和数据类型一起）是否相同，不同时写出两种类型。"
        "把输入移到这一层的设备和数据类型上："
        "`x.to(conv.weight.device, conv.weight.dtype)`。",
    ),
    before="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to("cuda")
x = torch.randn(1, 3, 32, 32)
y = conv(x)
""",
    after="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to("cuda")
x = torch.randn(1, 3, 32, 32)
y = conv(x.to(conv.weight.device, conv.weight.dtype))
""",
    needs_gpu=True,
)
def conv_devices(lab: Lab, r: BreakResult) -> None:
    gen = torch.Generator().manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, kernel_size=3, bias=False)
    x = torch.randn(1, 3, 32, 32, generator=gen)
    if lab.gpu:
        conv, r.device = conv.to("cuda:0"), "cuda:0"
        r.tensors = [row("x", x), row("conv.weight", conv.weight)]
        attempt(r, lambda: convolve(conv, x))
    else:
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode(allow_non_fake_inputs=True)
        fconv = fake_copy(conv, mode)
        probe = BreakResult(r.scenario, r.number, "", "")
        with mode, torch.no_grad():
            attempt(probe, lambda: convolve(fconv, x))
        if probe.raised:  # a PyTorch whose fake convolution checks devices: use it
            probe_fields = {k: v for k, v in asdict(probe).items() if k.startswith(("raised", "error", "frame"))}
            for k, v in probe_fields.items():
                setattr(r, k, v)
            r.tensors = [row("x", x), row("conv.weight", fconv.weight)]
            simulated(r)
        else:  # the fake convolution skips the type check: trip the same check with a dtype difference
            xb = x.to(torch.bfloat16)
            r.tensors = [row("x", xb), row("conv.weight", conv.weight)]
            with torch.no_grad():
                attempt(r, lambda: convolve(conv, xb))
            simulated(r, "sim.conv_dtype", "")
            r.device = "cpu"
            x = xb

    def fixed():
        with torch.no_grad():
            y = conv(x.to(conv.weight.device, conv.weight.dtype))
        return True, f"y: shape {list(y.shape)}, {str(y.dtype).removeprefix('torch.')} on {y.device}", None

    fix(r, fixed, r.device if r.device.startswith("cuda") else "cpu")


@scenario(
    "generate-device-type", 10,
    title=W("generate() called with input_ids on a different device type than the model",
            "调用 generate() 时 input_ids 与模型的设备类型不同"),
    explain=W(
        "Transformers compares the device type of `input_ids` with the model's before generating (types "
        "only: cuda:1 against cuda:0 passes) and warns when they differ. Transformers 5 then copies the "
        "forward's inputs to the model's device before every step, so on a GPU the warning and a slower "
        "loop are the cost; older versions failed with the device mismatch of the first mistake. Move "
        "the inputs to `model.device` once, before calling generate().",
        "Transformers 在生成前比较 `input_ids` 和模型的设备类型（只比较类型："
        "cuda:1 对 cuda:0 不会触发），不同就发出警告。"
        "Transformers 5 随后会在每一步前把前向传播的输入复制到模型所在设备，所以在 GPU 上，"
        "代价是这条警告和更慢的循环；旧版本则会以第一个错误那样的设备不匹配失败。"
        "调用 generate() 之前，把输入一次性移到 `model.device`。",
    ),
    before="""
model = AutoModelForCausalLM.from_pretrained(path)          # stays on the CPU
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to("cuda")
output = model.generate(input_ids, max_new_tokens=8)
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(model.device)
output = model.generate(input_ids, max_new_tokens=8)
""",
    needs_gpu=True,
)
def generate_device_type(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    mask = lab.mask if lab.mask is not None else torch.ones_like(lab.ids)
    kwargs = dict(max_new_tokens=NEW_TOKENS, do_sample=False)
    if lab.gpu:
        ids, r.device = lab.ids.to("cuda:0"), "cuda:0"
        r.tensors = [row("input_ids", ids), row("attention_mask", mask), row(
            name_of(src, src.get_input_embeddings().weight), src.get_input_embeddings().weight)]
        attempt(r, lambda: call_generate(src, ids, mask.to("cuda:0"), **kwargs))
    else:
        # A shallow copy shares every weight; only its generation settings differ (see sim.meta_generate).
        shallow = copy.copy(src)
        cfg = copy.deepcopy(src.generation_config)
        cfg.eos_token_id = cfg.bos_token_id = cfg.pad_token_id = None
        object.__setattr__(shallow, "generation_config", cfg)
        ids = lab.ids.to("meta")
        r.tensors = [row("input_ids", ids), row("attention_mask", mask), row(
            name_of(src, src.get_input_embeddings().weight), src.get_input_embeddings().weight)]
        attempt(r, lambda: call_generate(shallow, ids, mask, **kwargs))
        simulated(r, "sim.meta_generate", "")
        r.device = "meta"

    def fixed():
        with torch.inference_mode():
            out = src.generate(input_ids=lab.ids.to(src.device), attention_mask=mask.to(src.device), **kwargs)
        return True, lab.text(src, out), out.shape[1] - lab.ids.shape[1]

    fix(r, fixed)


SCENARIOS = (inputs_on_cpu, model_on_cpu, block_left_behind, conv_devices, generate_device_type)
