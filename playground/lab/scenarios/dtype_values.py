"""Dtype mistakes in the values themselves: float16's range, NumPy's missing bfloat16, ids that are not integers.

Each raises live on this CPU, in the broken script's own text; each fix is its script, run as written.
"""

from __future__ import annotations

import torch

from playground.core.i18n import W
from playground.lab.harness import Lab, attempt_script, row, run_fix, scenario
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script

TEMPERATURE = "1e-4"  # "almost greedy": a learner's way to sample with little randomness


@scenario(
    "fp16-overflow", 31,
    title=W("float16 overflow: sampling at a tiny temperature turns the scores into inf and nan",
            "float16 溢出：用极小的温度采样，分数变成 inf 和 nan"),
    explain=W(
        "float16's largest finite value is 65504. Dividing float16 logits by a temperature of 0.0001 (to sample "
        "almost greedily) multiplies them by 10,000: every logit above 6.5 becomes inf, the softmax of a row "
        "holding inf is nan, and `torch.multinomial` refuses the probabilities. The model was fine; the "
        "arithmetic left float16's range. generate() upcasts the scores to float32 before it scales them; do the "
        "same (`logits.float()`), or take the argmax when you want the top token.",
        "float16 能表示的最大有限值是 65504。把 float16 的 logits 除以 0.0001 的温度（想几乎贪心地采样），"
        "等于乘以 10,000：大于 6.5 的 logit 全都变成 inf，含 inf 的一行做 softmax 得到 nan，"
        "`torch.multinomial` 拒绝这样的概率。模型本身没问题，是算术超出了 float16 的范围。"
        "generate() 在缩放分数之前先把它们转成 float32；照做（`logits.float()`），要最高的 token 就直接取 argmax。",
    ),
    before=f"""
scores = logits[0, -1] / {TEMPERATURE}          # float16: beyond 65504 is inf
next_id = torch.multinomial(torch.softmax(scores, dim=-1), 1)
""",
    after=f"""
scores = logits[0, -1].float() / {TEMPERATURE}  # float32 first, as generate() does
next_id = torch.multinomial(torch.softmax(scores, dim=-1), 1)
""",
    # on the CPU the sampler's check raises; on a CUDA GPU the same check is a kernel's assert, and the next CUDA
    # call raises "CUDA error: device-side assert triggered" (AcceleratorError, a RuntimeError, from torch 2.9)
    expect=Outcome(RuntimeError, r"probability tensor contains either `?inf`?, `?nan`? or element < 0"
                                 r"|CUDA error: device-side assert triggered"),
    group="dtype",
    apart_on=("cuda",),  # a device-side assert leaves the process's CUDA context unusable: lab/apart.py
    bundled_only=True,  # trained logits reach 10 and more: a random model's stay near 0 and fit in float16
    script=Script("lm", broken=f"""
model = model.to(device, torch.float16)   # half the memory
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
scores = logits[0, -1] / {TEMPERATURE}          # float16 scores: anything beyond 65504 is inf
print("scores that overflowed to inf:", int(torch.isinf(scores).sum()), "of", scores.numel())
probs = torch.softmax(scores, dim=-1)           # a row holding inf gives nan
next_id = torch.multinomial(probs, num_samples=1)
print(prompt, "->", repr(tokenizer.decode(next_id)))
""", fix=f"""
model = model.to(device, torch.float16)   # half the memory
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
scores = logits[0, -1].float() / {TEMPERATURE}  # float32 first, as generate() does
print("scores that overflowed to inf:", int(torch.isinf(scores).sum()), "of", scores.numel())
probs = torch.softmax(scores, dim=-1)
next_id = torch.multinomial(probs, num_samples=1)
print(prompt, "->", repr(tokenizer.decode(next_id)))
"""),
)
def fp16_overflow(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, fp16_overflow, r)
    fixed = run_fix(lab, fp16_overflow, r)
    if "scores" not in ns and "logits" in fixed:
        # run in a process of its own (a GPU): the fix computed the same float16 logits; the broken line's
        # division, repeated on them, is what overflowed there
        ns = {"logits": fixed["logits"], "scores": fixed["logits"][0, -1] / float(TEMPERATURE)}
    if "scores" in ns:
        r.tensors = [row("logits", ns["logits"]), row("scores", ns["scores"])]
        r.measured = dict(largest_logit=round(float(ns["logits"][0, -1].float().max()), 3),
                          scores_inf=int(torch.isinf(ns["scores"]).sum()), float16_max=torch.finfo(torch.float16).max)


@scenario(
    "bf16-numpy", 32,
    title=W("A bfloat16 tensor handed to NumPy", "把 bfloat16 张量交给 NumPy"),
    explain=W(
        "NumPy has no bfloat16 dtype, so `Tensor.numpy()` cannot share a bfloat16 tensor's memory and refuses it, "
        "naming the ScalarType. Logits and hidden states of a model loaded in bfloat16 are bfloat16. Convert "
        "first: `.float().numpy()` (float32 holds every bfloat16 value exactly), after `.cpu()` on a GPU.",
        "NumPy 没有 bfloat16 这种数据类型，所以 `Tensor.numpy()` 无法共享 bfloat16 张量的内存，"
        "会拒绝并写出 ScalarType。以 bfloat16 加载的模型，它的 logits 和隐藏状态都是 bfloat16。"
        "先转换：`.float().numpy()`（float32 能精确表示每个 bfloat16 值），在 GPU 上先 `.cpu()`。",
    ),
    before="probs = torch.softmax(logits[0, -1], dim=-1).cpu().numpy()   # bfloat16",
    after="probs = torch.softmax(logits[0, -1], dim=-1).float().cpu().numpy()",
    expect=Outcome(TypeError, r"unsupported ScalarType BFloat16"),
    group="dtype",
    script=Script("lm", imports="import numpy as np", broken="""
model = model.to(device, torch.bfloat16)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
probs = torch.softmax(logits[0, -1], dim=-1).cpu().numpy()          # NumPy has no bfloat16
print("top 5 token ids by NumPy:", np.argsort(probs)[::-1][:5].tolist())
""", fix="""
model = model.to(device, torch.bfloat16)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits
probs = torch.softmax(logits[0, -1], dim=-1).float().cpu().numpy()  # float32 holds every bfloat16 value
print("top 5 token ids by NumPy:", np.argsort(probs)[::-1][:5].tolist())
"""),
)
def bf16_numpy(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, bf16_numpy, r)
    if "logits" in ns:
        r.tensors = [row("logits", ns["logits"])]
    run_fix(lab, bf16_numpy, r)


@scenario(
    "float-indices", 33,
    title=W("Token ids in a float tensor, fed to the embedding", "token id 存在浮点张量里，交给词嵌入"),
    explain=W(
        "An embedding is a lookup: row i of its weight for id i, so its indices must be integers (int64 or "
        "int32). A batch built with `torch.zeros(...)` and filled with ids is float32 (torch's default dtype), "
        "and the first layer refuses it, naming the type it got. Make the buffer an integer one: "
        "`torch.zeros(..., dtype=torch.long)` (or `.long()` on the ids).",
        "词嵌入是查表：id 为 i 就取权重的第 i 行，所以索引必须是整数（int64 或 int32）。"
        "用 `torch.zeros(...)` 建一个批次再填入 id，得到的是 float32（torch 的默认数据类型），"
        "第一层就会拒绝，并写出它收到的类型。让缓冲区是整数类型："
        "`torch.zeros(..., dtype=torch.long)`（或者对 id 调用 `.long()`）。",
    ),
    before="batch = torch.zeros(1, len(ids))            # float32\nbatch[0] = torch.tensor(ids)",
    after="batch = torch.zeros(1, len(ids), dtype=torch.long)\nbatch[0] = torch.tensor(ids)",
    expect=Outcome(RuntimeError, r"'indices' to have one of the following scalar types: Long, Int"),
    group="dtype",
    script=Script("lm", broken="""
model = model.to(device)
ids = tokenizer(prompt).input_ids
batch = torch.zeros(1, len(ids))                   # a buffer to fill: float32, torch's default dtype
batch[0] = torch.tensor(ids)
with torch.inference_mode():
    logits = model(batch.to(device)).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix="""
model = model.to(device)
ids = tokenizer(prompt).input_ids
batch = torch.zeros(1, len(ids), dtype=torch.long)  # token ids are integers
batch[0] = torch.tensor(ids)
with torch.inference_mode():
    logits = model(batch.to(device)).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
"""),
)
def float_indices(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, float_indices, r)
    if "batch" in ns:
        emb = ns["model"].get_input_embeddings().weight
        r.tensors = [row("batch", ns["batch"]), row("embedding.weight", emb)]
    run_fix(lab, float_indices, r)


SCENARIOS = (fp16_overflow, bf16_numpy, float_indices)
