"""Diagnose a pasted error: name the lab mistake(s) behind a traceback, or say honestly that none fits.

`diagnose(text)` applies hand-written patterns over the wording PyTorch, Transformers and
Accelerate use (the variable parts left open) and the installed libraries' own messages
(`playground.lab.messages`); each match adds weight to the mistakes it points at, best first.
The patterns recognise text; they are never text the playground prints. Only the first and last
32 KiB are scanned, and every pattern is linear. How the rules match and rank: docs/lab.md.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import asdict, dataclass, field

from playground.core.i18n import Said, bilingual, said
from playground.lab import messages, oom
from playground.lab.diagnoses import EXTRA
from playground.lab.scenarios import SCENARIOS

SCAN_CHARS = 32 * 1024  # from each end of the pasted text


_DEV = r"([A-Za-z]+(?::\d+)?)"

# The offload family, the warning's own mistake first (loading with too little memory, unnoticed).
OFFLOAD = ["offload-warning-ignored", "offloaded-moved", "offload-inputs-model-device", "offload-weight-read",
           "offload-state-dict-saved"]

# Device mismatches in training code: the same messages, other places (after the inference ones in a ranking).
TRAINING_DEVICE = ["labels-on-cpu", "to-not-reassigned", "tensor-in-forward", "unregistered-tensor",
                   "loss-weight-not-moved"]

# Each rule: (name, pattern, weight, ids best first), compiled ignoring case. Refinements below.
_RULE_TEXT: list[tuple[str, str, float, list[str]]] = [
    # Two wordings: "... found at least two devices, cuda:0 and cpu! (when checking argument for argument index
    # in method ...)" and, in newer PyTorch, "... but got index is on cpu, different from other tensors on cuda:0
    # (when checking argument in method ...)".
    ("same-device",
     r"Expected all tensors to be on the same device"
     r"(?:, but found at least two devices, " + _DEV + r" and " + _DEV + r"!?"
     r"|, but got (\w{1,40}) is on " + _DEV + r", different from other tensors on " + _DEV + r")?"
     r"(?: ?\(when checking argument(?: for argument (\w{1,40}))? in method (\w{1,80})\))?",
     3.0, ["inputs-on-cpu", "model-on-cpu", "block-left-behind", *TRAINING_DEVICE]),
    # FakeTensor's own wording until torch 2.11 (torch.compile, torch.export and the lab's simulation raise it):
    # "Unhandled FakeTensor Device Propagation for aten.embedding.default, found two different devices cuda:0, cpu"
    ("fake-device", r"Unhandled FakeTensor Device Propagation for ([\w.]{1,80}), found two different devices "
     + _DEV + r", " + _DEV, 3.0, ["inputs-on-cpu", "model-on-cpu", "block-left-behind", *TRAINING_DEVICE]),
    # PyTorch 1.x: "Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking ...)"
    ("tensor-for-argument", r"Tensor for (?:argument #\d+ )?'?(\w{1,40})'? is on (CPU|GPU|CUDA)",
     3.0, ["block-left-behind", "inputs-on-cpu", "model-on-cpu", *TRAINING_DEVICE]),
    # PyTorch 1.x: "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to
    # _th_index_select", "Expected object of backend CUDA but got backend CPU for argument #2 'mat2'": the argument
    # named is on the second device, the others on the first
    ("old-device",
     r"Expected object of (?:device type|backend) (\w{1,10}) but got (?:device type|backend) (\w{1,10})"
     r" for argument #\d{1,2} '(\w{1,40})'(?: in call to (\w{1,80}))?",
     3.0, ["inputs-on-cpu", "model-on-cpu", "block-left-behind", *TRAINING_DEVICE]),
    # "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but
    # device 0 does not equal 1 (while checking arguments for cudnn_convolution)": devices as ordinals, -1 the CPU
    ("argument-devices",
     r"Expected tensor for argument #\d{1,2} '(\w{1,40})' to have the same device as tensor for argument"
     r" #\d{1,2} '(\w{1,40})'; but device (-?\d{1,3}) does not equal (-?\d{1,3})",
     3.0, ["inputs-on-cpu", "model-on-cpu", "cuda-mixed-to"]),
    ("different-gpus", r"arguments are located on different GPUs", 3.0,
     ["cuda-mixed-to", "inputs-on-cpu", "dataparallel-not-moved"]),
    # PyTorch 1.x's embedding on the GPU, given indices (or a weight) elsewhere
    ("current-device", r"Input,\s*output and indices must be on the current device", 3.0,
     ["inputs-on-cpu", "model-on-cpu", "to-not-reassigned"]),
    ("indices-device", r"indices should be either on cpu or on the same device as the indexed tensor", 3.0,
     ["unregistered-tensor", "tensor-in-forward", "inputs-on-cpu"]),
    ("generator", r"Expected a '(\w{1,10})' device type for generator but found '(\w{1,10})'", 5.0,
     ["generator-device"]),
    ("out-of-memory", oom.ANY.pattern, 5.0, ["out-of-memory"]),
    ("expected-device", r"Tensor on device " + _DEV + r" is not on the expected device " + _DEV,
     3.0, ["inputs-on-cpu", "model-on-cpu"]),
    ("mps-placeholder", r"Placeholder storage has not been allocated on MPS device",
     3.0, ["inputs-on-cpu", "model-on-cpu", "block-left-behind"]),
    # the end ("should be the same ...") is often cut off when pasted
    ("input-type", r"Input type \(([^()\n]{1,60})\) and (weight|bias) type \(([^()\n]{1,60})\)",
     3.0, ["conv-devices"]),
    ("dtype",
     r"expected m1 and m2 to have the same dtype|expected mat1 and mat2 to have the same dtype"
     r"|mat1 and mat2 must have the same dtype|expected scalar type \w{1,20} but found \w{1,20}"
     r"|mixed dtype \(CPU\)|Expected query, key,? and value to have the same dtype"
     r"|expected both vectors to have same dtype|must have the same dtype|to have the same dtype",
     3.0, ["dtype-mismatch", "autocast-outside"]),
    ("half-not-implemented", r"not implemented for '(?:Half|BFloat16)'",
     3.0, ["fp16-on-cpu", "dtype-mismatch"]),
    ("meta-copy", r"Cannot copy out of meta tensor|to_empty\(\) instead of torch\.nn\.Module\.to\(\)",
     3.0, ["meta-weights-moved", "meta-weights-run"]),
    ("meta-item", r"cannot be called on meta tensors", 3.0, ["meta-weights-run"]),
    ("offloaded", r"some modules offloaded to cpu or disk|dispatched using accelerate hooks", 4.0, ["offloaded-moved"]),
    # Accelerate's one warning when a device map offloads ("...on the meta device device because they were offloaded
    # to the cpu", its typo kept for years): every offload mistake's text carries it, so it weighs little; alone, it
    # is its own mistake (loaded with too little memory, unnoticed), then the diagnosis of a model that did not fit
    ("offload-warning", r"parameters are on the meta device(?: device)? because they were offloaded", 2.0,
     [OFFLOAD[0], "offloaded-to-fit", *OFFLOAD[1:]]),
    # the two refusals when layers must go to disk with no folder for them
    ("offload-fit", r"had weights offloaded to the disk|need an `?offload_(?:dir|folder)`? to dispatch",
     4.0, ["offloaded-to-fit", "offloaded-moved"]),
    # quantized models moved, cast or dispatched: Transformers' refusals for bitsandbytes (and any quantized model's
    # .half()/.float()), and a torchao tensor subclass meeting an operator it does not implement (Accelerate's
    # offload hooks' .to(dtype) under inference_mode, a permute, a swap in Module._apply)
    ("quantized", r"is not supported for `?[48]-bit`?|bitsandbytes models?|cast a bitsandbytes model"
     r"|`?\.(?:half|float)\(\)`? is not supported for quantized model", 4.0, ["quantized-moved", "quantized-offloaded"]),
    ("quantized-tensor", r"(\w{1,40}Tensor) dispatch: attempting to run unimplemented operator/function"
     r"|_apply\(\): Couldn't swap (\w{1,40})\.weight", 4.0, ["quantized-offloaded", "quantized-moved"]),
    # float16's range left: sampling from scores that overflowed to inf (and the nan a softmax makes of them)
    ("inf-nan", r"probability tensor contains either `?inf`?, `?nan`? or element < 0", 4.0,
     ["fp16-overflow"]),
    # NumPy has no bfloat16 (nor a dtype for every torch one)
    ("numpy-dtype", r"Got unsupported ScalarType (\w{1,20})", 4.0, ["bf16-numpy"]),
    # indices that are not integers: an embedding's (any PyTorch version's wording) or a gather's / index_select's
    ("index-dtype",
     r"Expected tensor for argument #\d{1,2} '(?:indices|index)' to have (?:one of the following )?scalar types?:? "
     r"[\w, ]{1,40}; but got (?:torch\.)?(?:cuda\.)?\w{1,20} instead"
     r"|(?:gather|index_select|scatter)\w{0,12}\(\): Expected dtype int(?:32/int64|64|32) for index"
     r"|tensors used as indices must be long, int, byte or bool tensors", 4.0, ["float-indices"]),
    ("deserialize", r"Attempting to deserialize object on (?:a )?(?:CUDA|MPS|XPU|HPU) device", 4.0,
     ["cuda-checkpoint", "optimizer-state-from-gpu"]),
    ("generate-device", r"\.generate\(\)`? with the `?input_ids`? being on a device type different",
     5.0, ["generate-device-type"]),
    ("device-side-assert",
     r"device-side assert triggered|srcIndex < srcSelectDimSize|indexSelect(?:Large|Small)Index"
     r"|index out of range in self|Assertion `(?:t|idx) >= 0 && (?:t|idx) < n_classes",
     4.0, ["device-side-assert"]),
    ("no-cuda",
     r"Torch not compiled with CUDA enabled|Found no NVIDIA driver on your system|No CUDA GPUs are available"
     r"|not linked with support for cuda devices|CUDA driver initialization failed",
     3.0, ["no-cuda", "cuda-mixed-to"]),
    ("mps-float64", r"MPS (?:framework|backend) doesn't support float64|convert a MPS Tensor to float64",
     4.0, ["mps-float64"]),
    ("data-parallel", r"module must have its parameters and buffers on device \S+ \(device_ids\[0\]\)",
     4.0, ["dataparallel-not-moved"]),
    ("numpy", r"can't convert (\S{1,20}) device type tensor to numpy", 4.0, ["numpy-on-gpu"]),
    ("state-dict-prefix", r"Unexpected key\(s\) in state_dict: \"module\.", 5.0, ["dataparallel-prefix"]),
    ("state-dict", r"(?:Missing|Unexpected) key\(s\) in state_dict", 3.0,
     ["strict-false-hides", "dataparallel-prefix"]),
    ("pin-memory", r"'pin_memory' argument is set as true but no accelerator|pin_memory=True requires",
     4.0, ["pin-memory-no-gpu"]),
    ("autocast-disabled", r"CUDA is not available or torch_xla is imported\. Disabling autocast", 4.0,
     ["autocast-outside"]),
]
_RULES = [(name, re.compile(pattern, re.I), weight, ids) for name, pattern, weight, ids in _RULE_TEXT]
CATALOG_WEIGHT = 2.0  # a library message no rule knows better

_MATMUL_OPS = ("addmm", "mm", "bmm", "matmul", "linear", "layer_norm", "baddbmm", "mat1", "mat2", "cat",
               "native_layer_norm", "rms_norm", "_fused_rms_norm")


@dataclass
class Match:
    id: str
    score: float
    scenario: bool  # True when the lab can reproduce it
    title: Said
    explanation: Said
    fix_before: str
    fix_after: str
    matched: list[str] = field(default_factory=list)  # the lines of the pasted text that matched


@dataclass
class DiagnoseResult:
    recognised: bool
    matches: list[Match]
    text_chars: int
    scanned_chars: int
    oom: oom.Oom | None = None  # an out-of-memory message's own numbers, when the text holds one

    def ids(self) -> list[str]:
        return [m.id for m in self.matches]

    def to_dict(self) -> dict:
        return {
            "recognised": self.recognised,
            "matches": self.ids(),
            "explanations": [bilingual(asdict(m), "title", "explanation") for m in self.matches],
            "text_chars": self.text_chars,
            "scanned_chars": self.scanned_chars,
            "oom": _oom_dict(self.oom),
        }


def _oom_dict(o: oom.Oom | None) -> dict | None:
    """The API's `oom`: the numbers read (bytes), the bar's parts, and the remedies in both languages."""
    if o is None:
        return None
    d = {k: v for k, v in asdict(o).items() if k != "processes"}
    d.update(allocator_cache=o.cache, processes=[{"pid": p, "bytes": b} for p, b in o.processes],
             parts=[{"part": p, "bytes": b} for p, b in o.parts()],
             remedies_en=[r.text("en") for r in o.remedies()], remedies_zh=[r.text("zh") for r in o.remedies()])
    return d


# In a pasted traceback, the deepest frame naming an operator tells what met the mismatch.
_FRAME_OP = re.compile(
    r"\bin (embedding|layer_norm|linear|addmm|matmul|conv[123]d|rms_norm|scaled_dot_product_attention"
    r"|cross_entropy|nll_loss)[ \t]*$",
    re.MULTILINE)


def _refine(rule: str, m: re.Match, ids: list[str], frame_op: str = "", text: str = "") -> list[str]:
    """Reorder a rule's candidates using what the pattern captured (or the traceback's operator and lines)."""
    if rule == "no-cuda" and ".cuda()" in text:  # the traceback shows the line: a .cuda() call
        return ["cuda-mixed-to", "no-cuda"]
    if rule == "tensor-for-argument":
        if m.group(1).lower() in ("index", "indices", "input_ids", "input"):
            return ["inputs-on-cpu", "model-on-cpu", *TRAINING_DEVICE]
        return ids
    if rule == "argument-devices":  # ordinals: -1 is the CPU
        first, second = int(m.group(3)), int(m.group(4))
        if first == -1 or second == -1:
            cpu_arg = (m.group(1) if first == -1 else m.group(2)).lower()
            return ["inputs-on-cpu", "model-on-cpu"] if cpu_arg in ("input", "self", "index") else \
                ["model-on-cpu", "inputs-on-cpu", "block-left-behind"]
        return ids  # two GPUs
    if rule == "old-device":  # "expected <other> but got <arg_dev> for argument '<arg>' in call to <op>"
        return _device_pair(m.group(3), m.group(2).lower(), m.group(1).lower(), (m.group(4) or frame_op).lower(), ids)
    if rule == "same-device":
        if m.group(3):  # "<arg> is on <arg_dev>, different from other tensors on <other>"
            arg, arg_dev, other = m.group(3), m.group(4), m.group(5)
        else:  # "found at least two devices, <other> and <arg_dev>": the argument named later is the odd one
            arg, arg_dev, other = m.group(6) or "", m.group(2) or "", m.group(1) or ""
        return _device_pair(arg, arg_dev, other, (m.group(7) or frame_op).lower(), ids)
    if rule == "fake-device":  # "for <op>, found two different devices <other>, <arg_dev>": the later one is odd;
        # the traceback's operator (layer_norm) says more than the ATen one it decomposed into (aten.mul.Tensor)
        return _device_pair("", m.group(3), m.group(2), (frame_op or m.group(1)).lower(), ids)
    if rule == "meta-copy" and "send_to_device" in text:  # an Accelerate hook moving the inputs: they were on meta
        return ["offload-inputs-model-device", *ids]
    if rule == "meta-copy" and "loading state_dict" in text:  # a saved state dict held meta tensors
        return ["offload-state-dict-saved", *ids]
    if rule == "meta-item" and "offloaded to the" in text:  # a weight of a model Accelerate offloaded
        return ["offload-weight-read", *ids]
    if rule == "expected-device":
        if "meta" in (m.group(1), m.group(2)):
            return ["meta-weights-run", "meta-weights-moved"]
        return ids
    if rule == "input-type":
        a, b = m.group(1).lower(), m.group(3).lower()
        accel = ("cuda", "mps", "xpu", "hip")
        if any(k in a for k in accel) != any(k in b for k in accel):  # (lower-cased above)
            return ["conv-devices"]
        return ["conv-devices", "dtype-mismatch"]  # the same check, tripped by a dtype difference
    return ids


def _device_pair(arg: str, arg_dev: str, other: str, op: str, ids: list[str]) -> list[str]:
    """The mistakes behind one argument (`arg`, on `arg_dev`) on another device than the rest (`other`), in
    the operator `op`: every wording of the device check names these four things."""
    arg = arg.lower()
    devs = {d.split(":")[0].lower() for d in (arg_dev, other) if d}
    if "meta" in devs:
        return ["meta-weights-run", "meta-weights-moved"]
    if devs == {"cuda"} and arg_dev == "cuda:0" and other not in ("", "cuda:0"):
        # two GPUs, the odd tensor on cuda:0, the current GPU: where a .cuda() among .to(device) calls puts it
        return ["cuda-mixed-to", "inputs-on-cpu", "model-on-cpu", "block-left-behind"]
    if "nll_loss" in op or "cross_entropy" in op or arg == "target":
        # the loss: its target (the labels) or its class weights sit on the other device
        return (["loss-weight-not-moved", "labels-on-cpu"] if arg == "weight"
                else ["labels-on-cpu", "loss-weight-not-moved"])
    model_on_cpu = ["model-on-cpu", "inputs-on-cpu", "block-left-behind"]
    inputs_on_cpu = ["inputs-on-cpu", "model-on-cpu", "block-left-behind"]
    if any(k in op for k in ("index_select", "embedding")) or arg in ("index", "indices", "input_ids"):
        # an embedding lookup: the indices are the inputs, the other tensor is the weight
        weight_dev = other if arg in ("index", "indices", "input_ids", "") else arg_dev
        # the weight on the CPU: the model never moved; otherwise the ids sit on the wrong device
        if weight_dev.lower().startswith("cpu"):
            return model_on_cpu[:2]
        return [*inputs_on_cpu[:2], "to-not-reassigned"]
    if any(k in op for k in _MATMUL_OPS) or arg in ("mat1", "mat2", "weight", "bias"):
        return ["block-left-behind", "inputs-on-cpu", "model-on-cpu", "unregistered-tensor"]
    if other.lower().startswith("cpu"):
        return model_on_cpu + TRAINING_DEVICE
    return ids


LINE_CHARS = 240  # the most of a matched line shown; a longer one is cut around the match, "…" where cut


class _Lines:
    """The pasted text collapsed to one line (`flat`: line wraps and indentation gone, so a wrapped message
    reads as one), and the way back from a place in it to the pasted line it came from."""

    def __init__(self, text: str):
        self.lines = [line for line in text.splitlines() if line.split()]
        self.starts: list[int] = []  # where each line begins in `flat`
        at = 0
        for line in self.lines:
            self.starts.append(at)
            at += len(" ".join(line.split())) + 1
        self.flat = " ".join(" ".join(line.split()) for line in self.lines)
        self._words: dict[int, list[re.Match]] = {}  # a long line's words, read once

    def line_at(self, pos: int) -> str:
        """The pasted line holding `flat[pos]`, as pasted (its indentation aside), cut to LINE_CHARS around that
        place with "…" at each cut end."""
        i = max(0, bisect.bisect_right(self.starts, pos) - 1)
        line = self.lines[i].strip()
        if len(line) <= LINE_CHARS:
            return line
        # the same place in the pasted line: the same letter of the same word
        if i not in self._words:
            self._words[i] = list(re.finditer(r"\S+", line))
        words = self._words[i]
        seg, at = pos - self.starts[i], 0
        for w in words[:-1]:
            if at + len(w.group()) >= seg:
                break
            at += len(w.group()) + 1
        else:
            w = words[-1]
        here = w.start() + max(0, seg - at)
        a = max(0, min(here - LINE_CHARS // 3, len(line) - LINE_CHARS))
        b = a + LINE_CHARS
        return ("…" if a else "") + line[a:b] + ("…" if b < len(line) else "")


def diagnose(text: str) -> DiagnoseResult:
    """Match pasted error text (checked at the edge: `inputs.check_diagnose_text`) against the known
    mistakes; best first, or not recognised."""
    n = len(text)
    scanned = text if n <= 2 * SCAN_CHARS else text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]
    ops = _FRAME_OP.findall(scanned)
    frame_op = ops[-1] if ops else ""
    pasted = _Lines(scanned)
    flat = pasted.flat
    scores: dict[str, float] = {}
    order: dict[str, int] = {}
    lines: dict[str, list[str]] = {}

    def credit(sid: str, weight: float, line: str) -> None:
        scores[sid] = scores.get(sid, 0.0) + weight
        order.setdefault(sid, len(order))
        if line not in lines.setdefault(sid, []) and len(lines[sid]) < 3:
            lines[sid].append(line)

    for rule, pattern, weight, ids in _RULES:
        for found, m in enumerate(pattern.finditer(flat)):
            if found >= 20:
                break
            line = pasted.line_at(m.start())
            for rank, sid in enumerate(_refine(rule, m, ids, frame_op, flat)):
                credit(sid, weight / (rank + 1), line)
    low = flat.lower()
    for entry, at in messages.find(low):
        if any(sid in scores for sid in entry.mistakes):
            continue  # a rule read this message already, and ranked its mistakes better
        line = pasted.line_at(at)
        for rank, sid in enumerate(entry.mistakes):
            credit(sid, CATALOG_WEIGHT / (rank + 1), line)
    matches = []
    for sid in sorted(scores, key=lambda s: (-scores[s], order[s])):
        d = SCENARIOS.get(sid) or EXTRA[sid]
        matches.append(Match(
            id=sid, score=round(scores[sid], 3), scenario=sid in SCENARIOS,
            title=said(d.title), explanation=said(d.explain),
            fix_before=d.before, fix_after=d.after, matched=lines.get(sid, []),
        ))
    return DiagnoseResult(recognised=bool(matches), matches=matches, text_chars=n, scanned_chars=len(scanned),
                          oom=oom.read(scanned) if "out-of-memory" in scores else None)
