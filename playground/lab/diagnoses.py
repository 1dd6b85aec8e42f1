"""The mistakes the diagnoser knows that the lab cannot run: each one's words and fix, beside no scenario.

The lab's scenarios carry their own words (`playground.lab.scenarios`); these are the rest: errors
only a GPU, a quantized model or Apple's MPS can raise, named by the diagnoser with an explanation
and a before/after fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.i18n import W, register


@dataclass(frozen=True)
class Diagnosis:
    """A mistake the diagnoser knows that the lab cannot run: its words (i18n keys) and its fix."""

    id: str
    title: str  # diagnosis.<id>.title
    explain: str  # diagnosis.<id>.explain
    before: str
    after: str


def diagnosis(did: str, *, title: W, explain: W, before: str, after: str) -> Diagnosis:
    """A diagnosis, its words registered as i18n keys here, beside it."""
    return Diagnosis(did, register(f"diagnosis.{did}.title", title), register(f"diagnosis.{did}.explain", explain),
                     before, after)


# Diagnoses that are not lab scenarios: their words and fixes live here, the scenarios' with the scenarios.
EXTRA: dict[str, Diagnosis] = {d.id: d for d in (
    diagnosis(
        "quantized-moved",
        title=W("A bitsandbytes 4-bit or 8-bit model moved with .to()",
                "用 .to() 移动 bitsandbytes 的 4 位或 8 位模型"),
        explain=W(
            "A model loaded with `load_in_4bit`/`load_in_8bit` (a BitsAndBytesConfig) is placed on the "
            "GPU while loading, and its quantized weights cannot be moved or cast afterwards, so "
            "Transformers refuses `.to()`. Choose the device at load time with `device_map` and leave it "
            "there; move only the inputs.",
            "用 `load_in_4bit`/`load_in_8bit`（BitsAndBytesConf"
            "ig）加载的模型在加载时就被放到 GPU 上，量化后的权重之后不能再移动或转换类型，"
            "所以 Transformers 拒绝 `.to()`。"
            "在加载时用 `device_map` 选定设备，不再移动；只移动输入。",
        ),
        before='model = AutoModelForCausalLM.from_pretrained(\n    name, quantization_config=BitsAndBytesConfig(load_in_4bit=True))\nmodel.to("cuda")',
        after='model = AutoModelForCausalLM.from_pretrained(\n    name, quantization_config=BitsAndBytesConfig(load_in_4bit=True),\n    device_map="auto")\ninputs = inputs.to(model.device)  # move the inputs, not the model',
    ),
    diagnosis(
        "device-side-assert",
        title=W("CUDA device-side assert: usually an index out of range",
                "CUDA device-side assert：通常是索引越界"),
        explain=W(
            "A GPU kernel checked an index and found it out of range, most often a token id at or beyond "
            "the embedding's vocabulary size (a tokenizer that does not match the model, or added tokens "
            "without `resize_token_embeddings`), or a label outside the classes. CUDA reports it late, "
            "at a later call, and the CUDA context is unusable afterwards. Rerun on the CPU (or with "
            "CUDA_LAUNCH_BLOCKING=1) to see the real line, and check `input_ids.max() < "
            "model.get_input_embeddings().num_embeddings`.",
            "某个 GPU 内核检查索引时发现越界，"
            "最常见的是 token id 大于等于词嵌入的词表大小（分词器与模型不匹配，"
            "或添加了 token 却没有 `resize_token_embeddings`），"
            "或者标签超出类别数。CUDA 报告得晚，出现在之后的某次调用，"
            "而且之后 CUDA 上下文就不能再用了。"
            "在 CPU 上重跑（或设置 CUDA_LAUNCH_BLOCKING=1）看到真正出错的行，"
            "并检查 `input_ids.max() < model.get_input_embedding"
            "s().num_embeddings`。",
        ),
        before='ids = tokenizer(text, return_tensors="pt").input_ids.to("cuda")\nmodel(ids)',
        after='ids = tokenizer(text, return_tensors="pt").input_ids\nvocab = model.get_input_embeddings().num_embeddings\nassert int(ids.max()) < vocab, (int(ids.max()), vocab)\n# added tokens? model.resize_token_embeddings(len(tokenizer))\nmodel(ids.to(model.device))',
    ),
    diagnosis(
        "no-cuda",
        title=W("CUDA asked for on a machine or a PyTorch build without it",
                "在没有 CUDA 的机器或 PyTorch 版本上请求 CUDA"),
        explain=W(
            "The code moves something to `cuda`, but this PyTorch is a CPU-only build or no NVIDIA "
            "driver and GPU are visible. Pick the device from what is available: `device = 'cuda' if "
            "torch.cuda.is_available() else 'cpu'`.",
            "代码把东西移到了 `cuda`，但这个 PyTorch 是只支持 CPU 的版本，"
            "或者看不到 NVIDIA 驱动和 GPU。根据可用的设备选择："
            "`device = 'cuda' if torch.cuda.is_available() el"
            "se 'cpu'`。",
        ),
        before='model.to("cuda")',
        after='device = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)',
    ),
    diagnosis(
        "mps-float64",
        title=W("float64 on Apple's MPS",
                "在 Apple 的 MPS 上使用 float64"),
        explain=W(
            "The MPS backend has no float64. A tensor created in float64 (NumPy's default for floats) "
            "cannot go to `mps`: convert it to float32 first, e.g. "
            "`torch.from_numpy(a).float().to('mps')`.",
            "MPS 后端没有 float64。以 float64 创建的张量（NumPy 浮点数的默认类型）"
            "不能移到 `mps`：先转换成 float32，"
            "例如 `torch.from_numpy(a).float().to('mps')`。",
        ),
        before='x = torch.from_numpy(array).to("mps")  # float64',
        after='x = torch.from_numpy(array).float().to("mps")',
    ),
)}
