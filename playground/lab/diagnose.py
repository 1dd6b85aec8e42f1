"""Diagnose a pasted error: name the lab mistake(s) behind a traceback, or say honestly that none fits.

The patterns below match the wording PyTorch, Transformers and Accelerate use
(and used in older versions: the dtype mismatch has had three wordings), with
the variable parts left open: the device names (`cuda:1`, `mps:0`, `xpu`,
`meta`), the operator in the parenthesis, the dtypes. They are patterns for
recognising text, never text the playground prints as an error.

Several rules can fire on one traceback; each adds its weight to the mistakes
it points at, and the matches come back best first. Some patterns are refined by
what they capture: in a device mismatch raised by an embedding lookup
(`index_select`), the device named second holds the indices, so "cuda:0 and
cpu" means the inputs were left behind and "cpu and cuda:0" that the model was.

Work is bounded: only the first and last 32 KiB of the text are scanned (the
exception line of a traceback is at its end), and every pattern is linear.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from playground.core.i18n import W
from playground.lab.scenarios import SCENARIOS

SCAN_CHARS = 32 * 1024  # from each end of the pasted text


@dataclass(frozen=True)
class Diagnosis:
    """A mistake the diagnoser knows that the lab cannot run: its words and its fix."""

    title: W
    explain: W
    before: str
    after: str


# Diagnoses that are not lab scenarios: their words and fixes live here, the scenarios' with the scenarios.
EXTRA: dict[str, Diagnosis] = {
    "quantized-moved": Diagnosis(
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
    "device-side-assert": Diagnosis(
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
    "no-cuda": Diagnosis(
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
    "mps-float64": Diagnosis(
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
}

_DEV = r"([A-Za-z]+(?::\d+)?)"

# Each rule: (name, compiled pattern, weight, ids best first). Refinements below.
_RULES: list[tuple[str, re.Pattern, float, list[str]]] = [
    # Two wordings: "... found at least two devices, cuda:0 and cpu! (when checking argument for argument index
    # in method ...)" and, in newer PyTorch, "... but got index is on cpu, different from other tensors on cuda:0
    # (when checking argument in method ...)".
    ("same-device", re.compile(
        r"Expected all tensors to be on the same device"
        r"(?:, but found at least two devices, " + _DEV + r" and " + _DEV + r"!?"
        r"|, but got (\w{1,40}) is on " + _DEV + r", different from other tensors on " + _DEV + r")?"
        r"(?: ?\(when checking argument(?: for argument (\w{1,40}))? in method (\w{1,80})\))?"),
     3.0, ["inputs-on-cpu", "model-on-cpu", "block-left-behind"]),
    ("expected-device", re.compile(r"Tensor on device " + _DEV + r" is not on the expected device " + _DEV),
     3.0, ["inputs-on-cpu", "model-on-cpu"]),
    ("mps-placeholder", re.compile(r"Placeholder storage has not been allocated on MPS device"),
     3.0, ["inputs-on-cpu", "model-on-cpu", "block-left-behind"]),
    ("input-type", re.compile(
        r"Input type \(([^()\n]{1,60})\) and (weight|bias) type \(([^()\n]{1,60})\) should be the same"),
     3.0, ["conv-devices"]),
    ("dtype", re.compile(
        r"expected m1 and m2 to have the same dtype|expected mat1 and mat2 to have the same dtype"
        r"|mat1 and mat2 must have the same dtype|expected scalar type \w{1,20} but found \w{1,20}"
        r"|mixed dtype \(CPU\)|Expected query, key,? and value to have the same dtype"
        r"|expected both vectors to have same dtype|must have the same dtype|to have the same dtype"),
     3.0, ["dtype-mismatch"]),
    ("half-not-implemented", re.compile(r"not implemented for '(?:Half|BFloat16)'"),
     3.0, ["fp16-on-cpu", "dtype-mismatch"]),
    ("meta-copy", re.compile(r"Cannot copy out of meta tensor|to_empty\(\) instead of torch\.nn\.Module\.to\(\)"),
     3.0, ["meta-weights-moved", "meta-weights-run"]),
    ("meta-item", re.compile(r"cannot be called on meta tensors"), 2.0,
     ["meta-weights-run"]),
    ("offloaded", re.compile(
        r"some modules offloaded to cpu or disk|dispatched using accelerate hooks"
        r"|parameters are on the meta device because they were offloaded"),
     4.0, ["offloaded-moved"]),
    ("quantized", re.compile(r"is not supported for `?[48]-bit`?|bitsandbytes models"), 4.0, ["quantized-moved"]),
    ("deserialize", re.compile(r"Attempting to deserialize object on (?:a )?(?:CUDA|MPS|XPU|HPU) device"), 4.0,
     ["cuda-checkpoint"]),
    ("generate-device", re.compile(r"\.generate\(\)`? with the `?input_ids`? being on a device type different"),
     5.0, ["generate-device-type"]),
    ("device-side-assert", re.compile(
        r"device-side assert triggered|srcIndex < srcSelectDimSize|indexSelect(?:Large|Small)Index"
        r"|index out of range in self|Assertion `(?:t|idx) >= 0 && (?:t|idx) < n_classes"),
     4.0, ["device-side-assert"]),
    ("no-cuda", re.compile(
        r"Torch not compiled with CUDA enabled|Found no NVIDIA driver on your system|No CUDA GPUs are available"
        r"|not linked with support for cuda devices|CUDA driver initialization failed"),
     3.0, ["no-cuda"]),
    ("mps-float64", re.compile(r"MPS (?:framework|backend) doesn't support float64|convert a MPS Tensor to float64"),
     4.0, ["mps-float64"]),
]

_MATMUL_OPS = ("addmm", "mm", "bmm", "matmul", "linear", "layer_norm", "baddbmm", "mat1", "mat2", "cat",
               "native_layer_norm", "rms_norm", "_fused_rms_norm")


@dataclass
class Match:
    id: str
    score: float
    scenario: bool  # True when the lab can reproduce it
    title_en: str
    title_zh: str
    explanation_en: str
    explanation_zh: str
    fix_before: str
    fix_after: str
    matched: list[str] = field(default_factory=list)  # the lines of the pasted text that matched


@dataclass
class DiagnoseResult:
    recognised: bool
    matches: list[Match]
    text_chars: int
    scanned_chars: int

    def ids(self) -> list[str]:
        return [m.id for m in self.matches]

    def to_dict(self) -> dict:
        return {
            "recognised": self.recognised,
            "matches": self.ids(),
            "explanations": [asdict(m) for m in self.matches],
            "text_chars": self.text_chars,
            "scanned_chars": self.scanned_chars,
        }


# In a pasted traceback, the deepest frame naming an operator tells what met the mismatch.
_FRAME_OP = re.compile(
    r"\bin (embedding|layer_norm|linear|addmm|matmul|conv[123]d|rms_norm|scaled_dot_product_attention)[ \t]*$",
    re.MULTILINE)


def _refine(rule: str, m: re.Match, ids: list[str], frame_op: str = "") -> list[str]:
    """Reorder a rule's candidates using what the pattern captured (or the traceback's operator)."""
    if rule == "same-device":
        if m.group(3):  # "<arg> is on <arg_dev>, different from other tensors on <other>"
            arg, arg_dev, other = m.group(3), m.group(4), m.group(5)
        else:  # "found at least two devices, <other> and <arg_dev>": the argument named later is the odd one
            arg, arg_dev, other = m.group(6) or "", m.group(2) or "", m.group(1) or ""
        op = (m.group(7) or frame_op).lower()
        devs = {d.split(":")[0] for d in (arg_dev, other) if d}
        if "meta" in devs:
            return ["meta-weights-run", "meta-weights-moved"]
        model_on_cpu = ["model-on-cpu", "inputs-on-cpu", "block-left-behind"]
        inputs_on_cpu = ["inputs-on-cpu", "model-on-cpu", "block-left-behind"]
        if any(k in op for k in ("index_select", "embedding")) or arg in ("index", "indices", "input_ids"):
            # an embedding lookup: the indices are the inputs, the other tensor is the weight
            weight_dev = other if arg in ("index", "indices", "input_ids", "") else arg_dev
            # the weight on the CPU: the model never moved; otherwise the ids sit on the wrong device
            return model_on_cpu[:2] if weight_dev.startswith("cpu") else inputs_on_cpu[:2]
        if any(k in op for k in _MATMUL_OPS) or arg in ("mat1", "mat2", "weight", "bias"):
            return ["block-left-behind", "inputs-on-cpu", "model-on-cpu"]
        if other.startswith("cpu"):
            return model_on_cpu
        return ids
    if rule == "expected-device":
        if "meta" in (m.group(1), m.group(2)):
            return ["meta-weights-run", "meta-weights-moved"]
        return ids
    if rule == "input-type":
        a, b = m.group(1).lower(), m.group(3).lower()
        accel = ("cuda", "mps", "xpu", "hip")
        if any(k in a for k in accel) != any(k in b for k in accel):
            return ["conv-devices"]
        return ["conv-devices", "dtype-mismatch"]  # the same check, tripped by a dtype difference
    return ids


def _line_of(text: str, start: int, end: int) -> str:
    a = text.rfind("\n", max(0, start - 300), start) + 1
    b = text.find("\n", end, end + 300)
    line = text[a:b if b != -1 else min(len(text), end + 300)].strip()
    return line[:300]


def diagnose(text: str) -> DiagnoseResult:
    """Match pasted error text (checked at the edge: `inputs.check_diagnose_text`) against the known
    mistakes; best first, or not recognised."""
    n = len(text)
    scanned = text if n <= 2 * SCAN_CHARS else text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]
    ops = _FRAME_OP.findall(scanned)
    frame_op = ops[-1] if ops else ""
    scores: dict[str, float] = {}
    order: dict[str, int] = {}
    lines: dict[str, list[str]] = {}
    for rule, pattern, weight, ids in _RULES:
        found = 0
        for m in pattern.finditer(scanned):
            found += 1
            if found > 20:
                break
            ranked = _refine(rule, m, ids, frame_op)
            for rank, sid in enumerate(ranked):
                scores[sid] = scores.get(sid, 0.0) + weight / (rank + 1)
                order.setdefault(sid, len(order))
                line = _line_of(scanned, m.start(), m.end())
                if line not in lines.setdefault(sid, []) and len(lines[sid]) < 3:
                    lines[sid].append(line)
    matches = []
    for sid in sorted(scores, key=lambda s: (-scores[s], order[s])):
        d = SCENARIOS.get(sid) or EXTRA[sid]
        matches.append(Match(
            id=sid, score=round(scores[sid], 3), scenario=sid in SCENARIOS,
            title_en=d.title.en, title_zh=d.title.zh, explanation_en=d.explain.en, explanation_zh=d.explain.zh,
            fix_before=d.before, fix_after=d.after, matched=lines.get(sid, []),
        ))
    return DiagnoseResult(recognised=bool(matches), matches=matches, text_chars=n, scanned_chars=len(scanned))
