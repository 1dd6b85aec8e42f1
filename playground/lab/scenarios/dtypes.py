"""Dtype mistakes: operands of one operator in different dtypes."""

from __future__ import annotations

import torch

from playground.core.i18n import W
from playground.lab.capture import attempt
from playground.lab.harness import Lab, blocks, name_of, row, run_fix, scenario
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script


def _next_from_embeds(model, input_ids, dtype=None):
    """A pipeline that passes inputs_embeds (as prompt tuning or multimodal code does)."""
    embeds = model.get_input_embeddings()(input_ids)
    if dtype is not None:
        embeds = embeds.to(dtype)
    logits = model(inputs_embeds=embeds).logits
    return logits[:, -1].argmax(-1)


@scenario(
    "dtype-mismatch", 4,
    title=W("Dtype mismatch: bfloat16 weights fed float32 inputs_embeds",
            "数据类型不匹配：bfloat16 权重遇到 float32 的 inputs_embeds"),
    explain=W(
        "The weights were cast to bfloat16, but the embeddings passed as `inputs_embeds` were computed "
        "in float32. Operators check their operands' dtypes: here it is the first LayerNorm that refuses "
        "(its CPU kernel accepts a lower-precision input with float32 weights, not the reverse); a "
        "Linear layer refuses with the matmul wording instead. Cast the inputs to the model's dtype, or "
        "build them with the model's own embedding layer.",
        "权重被转换成了 bfloat16，"
        "但作为 `inputs_embeds` 传入的嵌入是用 float32 计算的。"
        "算子会检查操作数的数据类型："
        "这里是第一个 LayerNorm 拒绝（它的 CPU 内核接受低精度输入配 float32 权重，"
        "反过来不行）；如果先遇到的是线性层，报错会换成矩阵乘法的说法。把输入转换成模型的数据类型，"
        "或者用模型自己的词嵌入层来生成它们。",
    ),
    before="""
model = model.to(torch.bfloat16)
embeds = model.get_input_embeddings()(input_ids).float()
logits = model(inputs_embeds=embeds).logits
""",
    after="""
model = model.to(torch.bfloat16)
embeds = model.get_input_embeddings()(input_ids).to(model.dtype)
logits = model(inputs_embeds=embeds).logits
""",
    # a matmul's dtype check; its wording changed over PyTorch versions (NOTES.md): any of them
    expect=Outcome(RuntimeError, r"dtype|scalar type"),
    group="dtype",
    script=Script("lm", broken="""
model = model.to(device, torch.bfloat16)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    embeds = model.get_input_embeddings()(input_ids).float()   # float32 embeddings...
    logits = model(inputs_embeds=embeds).logits                  # ...into a bfloat16 model
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
""", fix="""
model = model.to(device, torch.bfloat16)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    embeds = model.get_input_embeddings()(input_ids).to(model.dtype)   # the model's own dtype
    logits = model(inputs_embeds=embeds).logits
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())), "| logits in", logits.dtype)
"""),
)
def dtype_mismatch(lab: Lab, r: BreakResult) -> None:
    low = lab.copy().to(torch.bfloat16)
    with torch.inference_mode():
        embeds32 = low.get_input_embeddings()(lab.ids).float()
    block0 = blocks(low)[0] + ".0"
    n0, p0 = next(low.get_submodule(block0).named_parameters())
    r.tensors = [row("inputs_embeds", embeds32), row(f"{block0}.{n0}", p0),
                 row(name_of(low, low.get_input_embeddings().weight), low.get_input_embeddings().weight)]
    with torch.inference_mode():
        attempt(r, lambda: _next_from_embeds(low, lab.ids, torch.float32))
    run_fix(lab, dtype_mismatch, r)


SCENARIOS = (dtype_mismatch,)
