"""The break-it lab: run the correct pipeline changed in one place, and show what really happens.

Each scenario is one classic device or dtype mistake. It runs the lab's
pipeline (greedy decoding, one forward pass per token, on the bundled model or
the one passed in) with exactly one thing changed, and records what the
installed PyTorch, Transformers and Accelerate do about it: the exception type,
the library's own message (`str(exc)`, never a stored string), the frame of our
pipeline where it surfaced, the devices and dtypes of the tensors involved, and
any warning printed on the way. Then it runs the fixed pipeline for real and
records whether it worked, its output and its time.

Honest reproduction without a GPU. Mistakes 1-3 need two real devices. On a
host without CUDA, the model's tensors are made *fake* (PyTorch's
`FakeTensorMode`, the machinery `torch.compile` traces with): each carries a
device (`cuda:0`), a dtype and a shape, but no data. Operators then run
PyTorch's own device propagation, which raises PyTorch's own message. What
differs from a real GPU: the real message also names the operator in a
parenthesis, and the fixed run happens on the CPU. Where fake tensors cannot
reach the check (convolutions skip it; `generate()` needs token values), the
scenario says which real substitute it used and why. Every such result is marked
`simulated=True`.

Silent mistakes (float16 on a CPU, a forgotten `eval()` or `inference_mode()`)
raise nothing: they report `measured` numbers instead: times synced and read
with `time.perf_counter()`, logits compared element by element, and the bytes
autograd keeps for backward counted tensor by tensor with
`torch.autograd.graph.saved_tensors_hooks`.
"""

from __future__ import annotations

import copy
import functools
import html
import logging
import tempfile
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch

from playground import devices, threads
from playground.i18n import t
from playground.inputs import UserError, check_prompt
from playground.memory import fmt_bytes, weights_bytes

PLAYGROUND_DIR = Path(__file__).resolve().parent
PROMPT = "ROMEO:"
NEW_TOKENS = 8  # tokens each fixed pipeline generates
COPY_LIMIT = 600 * 2**20  # scenarios that copy the model use the bundled one above this size
FAKE = "cuda:0"  # the fake device of simulated runs
_RUN_LOCK = threading.Lock()  # one scenario at a time: warning capture and the save tagger are process-wide


@dataclass
class TensorRow:
    name: str
    device: str
    dtype: str
    shape: list[int]
    fake: bool = False


@dataclass
class BreakResult:
    scenario: str
    number: int
    title_en: str
    title_zh: str
    raised: bool = False
    error_type: str | None = None  # the exception's class name, e.g. "RuntimeError"
    error_bases: list[str] = field(default_factory=list)  # its base classes, nearest first
    error_message: str | None = None  # str(exception), live
    frame: str | None = None  # "playground/breakit.py:123 in _greedy: logits = model(input_ids).logits"
    raised_in: str | None = None  # the deepest frame: the library function that raised
    traceback: list[str] = field(default_factory=list)  # the last frames, as Python prints them
    warnings: list[str] = field(default_factory=list)  # warnings and log lines the libraries printed
    tensors: list[TensorRow] = field(default_factory=list)
    device: str = "cpu"  # where the broken run happened: "cpu", "cuda:0", "fake cuda:0", "meta"
    simulated: bool = False
    simulation_en: str = ""
    simulation_zh: str = ""
    cannot_run: str = ""  # why it could not run here ('' when it ran)
    explanation_en: str = ""
    explanation_zh: str = ""
    fix_before: str = ""
    fix_after: str = ""
    fix_ok: bool = False
    fix_output: str = ""
    fix_seconds: float | None = None
    fix_tokens: int | None = None
    fix_error: str = ""
    measured: dict = field(default_factory=dict)
    hf_device_map: dict | None = None
    flagged_modules: list[str] = field(default_factory=list)  # from the Inspect view of the broken model
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    def diagnose_text(self) -> str:
        """What a learner would paste into the diagnoser: the warnings and the error line."""
        lines = list(self.warnings)
        if self.raised:
            lines += ["Traceback (most recent call last):", *self.traceback, f"{self.error_type}: {self.error_message}"]
        return "\n".join(lines)


@dataclass
class Scenario:
    id: str
    number: int
    fn: Callable
    needs_gpu: bool
    silent: bool
    before: str
    after: str


SCENARIOS: dict[str, Scenario] = {}


def _scenario(sid: str, number: int, before: str, after: str, needs_gpu: bool = False, silent: bool = False):
    def register(fn):
        SCENARIOS[sid] = Scenario(sid, number, fn, needs_gpu, silent, before.strip("\n"), after.strip("\n"))
        return fn

    return register


def scenarios() -> list[dict]:
    """The lab's mistakes, in order: id, titles, whether a GPU is involved and whether it is simulated here."""
    gpu = torch.cuda.is_available()
    return [
        {"id": s.id, "number": s.number, "title_en": t(f"{s.id}.title", "en"), "title_zh": t(f"{s.id}.title", "zh"),
         "needs_gpu": s.needs_gpu, "silent": s.silent, "simulated_here": s.needs_gpu and not gpu}
        for s in sorted(SCENARIOS.values(), key=lambda s: s.number)
    ]


# --------------------------------------------------------------------------- the lab's model and pipeline


@functools.lru_cache(maxsize=1)
def bundled():
    """The bundled model and tokenizer, loaded once per process (float32, CPU, eval mode)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from playground.models import BUNDLED_DIR

    model = AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(BUNDLED_DIR)


def _greedy(model, input_ids, steps: int = NEW_TOKENS):
    """The lab's pipeline: greedy decoding, one forward pass per new token (no cache)."""
    for _ in range(steps):
        logits = model(input_ids).logits
        next_id = logits[:, -1:].argmax(-1)
        input_ids = torch.cat([input_ids, next_id], dim=-1)
    return input_ids


# The other pipelines' single steps, named so that the frame where an error surfaces reads as code.
def _move(model, device):
    return model.to(device)


def _load(path):
    return torch.load(path, weights_only=True)  # the mistake is the missing map_location


def _convolve(conv, x):
    return conv(x)


def _generate(model, input_ids, attention_mask, **kwargs):
    return model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)


class Lab:
    """What one scenario runs on: a CPU model, its tokenizer, the prompt's ids, and notes.

    The passed model is used when it lives on the CPU and is small enough to copy
    (scenarios break private copies, never the shared model); otherwise the
    bundled model is, and the result says so.
    """

    def __init__(self, model, tokenizer, prompt: str, result: BreakResult):
        self.r = result
        on_cpu = devices.torch_device_of(model).type == "cpu"
        size = weights_bytes(model)
        if on_cpu and size <= COPY_LIMIT:
            self.src, self.tokenizer = model, tokenizer
        else:
            self.src, self.tokenizer = bundled()
            if size > COPY_LIMIT:
                result.notes.append(t("sim.big_model", "en", size=fmt_bytes(size)))
        enc = self.tokenizer(prompt, return_tensors="pt")
        self.ids, self.mask = enc["input_ids"], enc.get("attention_mask")
        self.gpu = torch.cuda.is_available()

    def cpu_model(self):
        return self.src

    def copy(self):
        """A private deep copy to break (the shared model is never changed)."""
        return copy.deepcopy(self.src)

    def text(self, model, ids) -> str:
        return self.tokenizer.decode(ids[0, self.ids.shape[1]:])


def _row(name: str, x: torch.Tensor) -> TensorRow:
    from torch._subclasses.fake_tensor import FakeTensor

    return TensorRow(name, str(x.device), str(x.dtype).removeprefix("torch."), list(x.shape),
                     isinstance(x, FakeTensor))


def _name_of(model, tensor) -> str:
    for name, p in model.named_parameters():
        if p is tensor:
            return name
    return "weight"


def _blocks(model) -> tuple[str, torch.nn.ModuleList]:
    """The model's list of transformer blocks (GPT-2's transformer.h, Llama's model.layers, ...)."""
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.ModuleList) and len(mod) >= 2 and name.split(".")[-1] in ("h", "layers", "blocks"):
            return name, mod
    raise UserError("This model has no list of transformer blocks the lab recognises; use the bundled model.")


def fake_copy(model, mode, device: str = FAKE, left_behind: str | None = None):
    """A copy of `model` whose parameters and buffers are fake tensors on `device` (no data copied).

    The module named `left_behind` keeps its tensors on the (fake) CPU. Fake
    parameters do not require grad: autograd would need a real CUDA runtime.
    """
    memo: dict[int, object] = {}
    for mod_name, mod in model.named_modules():
        behind = left_behind is not None and (mod_name == left_behind or mod_name.startswith(left_behind + "."))
        target = "cpu" if behind else device
        for tensors, is_param in ((mod._parameters, True), (mod._buffers, False)):
            for x in tensors.values():
                if x is None or id(x) in memo:
                    continue
                fake = mode.from_tensor(x.detach())
                with mode:
                    fake = fake.to(target)
                memo[id(x)] = torch.nn.Parameter(fake, requires_grad=False) if is_param else fake
    return copy.deepcopy(model, memo)


def half_moved_model(model=None):
    """A fake copy of `model` (default: the bundled one) on fake cuda:0 with its first block left on the CPU."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    model = model if model is not None else bundled()[0]
    name, _ = _blocks(model)
    return fake_copy(model, FakeTensorMode(allow_non_fake_inputs=True), FAKE, left_behind=f"{name}.0")


def dtype_split_model(model=None, dtype: torch.dtype = torch.bfloat16):
    """A real copy of `model` with its first block cast to `dtype`: a half-converted model, runnable on a CPU."""
    m = copy.deepcopy(model if model is not None else bundled()[0])
    name, blocks = _blocks(m)
    blocks[0].to(dtype)
    return m


# --------------------------------------------------------------------------- capturing what happens


@contextmanager
def _capture_logs(out: list[str]):
    """Collect the warnings Transformers and Accelerate log (they use `logging`, not `warnings`)."""

    class _H(logging.Handler):
        def emit(self, record):
            out.append(record.getMessage())

    handler = _H(level=logging.WARNING)
    loggers = [logging.getLogger("transformers"), logging.getLogger("accelerate")]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeHandler(handler)


def _short_path(filename: str) -> str:
    p = Path(filename)
    try:
        return "playground/" + p.resolve().relative_to(PLAYGROUND_DIR).as_posix()
    except (ValueError, OSError):
        pass
    s = p.as_posix()
    return s.split("site-packages/", 1)[1] if "site-packages/" in s else s


def _frames(exc: BaseException) -> tuple[str | None, str | None]:
    """(the deepest frame in playground/, the deepest frame of all) of an exception's traceback."""
    tb = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in tb if _short_path(f.filename).startswith("playground/")]
    fmt = lambda f: f"{_short_path(f.filename)}:{f.lineno} in {f.name}" + (f": {f.line.strip()}" if f.line else "")
    return (fmt(ours[-1]) if ours else None), (fmt(tb[-1]) if tb else None)


# Frames of PyTorch's dispatch machinery (fake tensors, dynamo, pytree): true, but they bury the model's frames.
_MACHINERY = ("torch/_subclasses/", "torch/_dynamo/", "torch/utils/_stats.py", "torch/utils/_pytree.py",
              "torch/_compile.py", "torch/_ops.py", "torch/_prims_common/wrappers.py")


def _traceback_lines(exc: BaseException, keep: int = 10) -> list[str]:
    """The traceback as Python prints it (paths shortened), dispatch machinery left out, last `keep` frames."""
    lines = []
    for f in traceback.extract_tb(exc.__traceback__):
        path = _short_path(f.filename)
        if path.startswith(_MACHINERY):
            continue
        lines.append(f'  File "{path}", line {f.lineno}, in {f.name}' + (f"\n    {f.line.strip()}" if f.line else ""))
    return lines[-keep:]


def _attempt(r: BreakResult, fn: Callable):
    """Run the broken pipeline; record the exception (if any) and every warning, live."""
    logs: list[str] = []
    out = None
    with warnings.catch_warnings(record=True) as caught, _capture_logs(logs):
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as exc:  # the point of the lab: whatever the libraries raise
            r.raised = True
            r.error_type = type(exc).__name__
            r.error_bases = [c.__name__ for c in type(exc).__mro__[1:] if c not in (object, BaseException, Exception)]
            r.error_message = str(exc)[:4000]
            r.frame, r.raised_in = _frames(exc)
            r.traceback = _traceback_lines(exc)
            r.exc = exc  # kept for this run only (not in to_dict)
    for msg in [str(w.message) for w in caught] + logs:
        if msg and msg not in r.warnings:
            r.warnings.append(msg[:2000])
    return out


def _fix(r: BreakResult, fn: Callable, device="cpu") -> None:
    """Run the fixed pipeline for real and time it; fn returns (ok, output text, new tokens or None)."""
    try:
        devices.sync(device)
        t0 = time.perf_counter()
        ok, output, tokens = fn()
        devices.sync(device)
        r.fix_seconds = time.perf_counter() - t0
        r.fix_ok, r.fix_output, r.fix_tokens = bool(ok), output, tokens
    except Exception as exc:  # a fix that fails is reported, not hidden
        r.fix_ok, r.fix_error = False, f"{type(exc).__name__}: {str(exc)[:1000]}"


def _generate_fixed(lab: Lab, model, ids):
    def go():
        with torch.inference_mode():
            out = _greedy(model, ids)
        return True, lab.text(model, out.cpu()), out.shape[1] - ids.shape[1]

    return go


def _simulated(r: BreakResult, key: str = "sim.fake_cuda", differs: str = "sim.fake_cuda_differs") -> None:
    r.simulated, r.device = True, "fake " + FAKE
    r.simulation_en = t(key, "en") + (" " + t(differs, "en") if differs else "")
    r.simulation_zh = t(key, "zh") + (" " + t(differs, "zh") if differs else "")


def _expect_device_error(r: BreakResult) -> None:
    """A fake run must fail on PyTorch's device check; anything else is a limit of the simulation."""
    from torch._subclasses.fake_tensor import FakeTensorDeviceMismatchError

    exc = getattr(r, "exc", None)
    if exc is None or isinstance(exc, FakeTensorDeviceMismatchError) or "same device" in str(exc):
        return
    r.cannot_run = (f"The simulation stopped before PyTorch's device check: fake tensors on this PyTorch build could "
                    f"not run this model's code ({r.error_type} in {r.raised_in}: {r.error_message[:300]}). "
                    "On a GPU host this scenario runs for real.")
    r.raised, r.error_type, r.error_bases, r.error_message, r.frame, r.raised_in, r.traceback = (
        False, None, [], None, None, None, [])


# --------------------------------------------------------------------------- the twelve mistakes


@_scenario("inputs-on-cpu", 1, needs_gpu=True, before="""
model = model.to("cuda")
input_ids = tokenizer(prompt, return_tensors="pt").input_ids
logits = model(input_ids).logits
""", after="""
model = model.to("cuda")
input_ids = tokenizer(prompt, return_tensors="pt").input_ids
input_ids = input_ids.to(model.device)
logits = model(input_ids).logits
""")
def _inputs_on_cpu(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    emb = _name_of(src, src.get_input_embeddings().weight)
    if lab.gpu:
        model = copy.deepcopy(src).to("cuda:0")
        r.device = "cuda:0"
        r.tensors = [_row("input_ids", lab.ids), _row(emb, model.get_input_embeddings().weight)]
        with torch.inference_mode():
            _attempt(r, lambda: _greedy(model, lab.ids))
        _fix(r, _generate_fixed(lab, model, lab.ids.to(model.device)), "cuda:0")
        return
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    model = fake_copy(src, mode)
    _simulated(r)
    r.tensors = [_row("input_ids", lab.ids), _row(emb, model.get_input_embeddings().weight)]
    with mode, torch.no_grad():
        _attempt(r, lambda: _greedy(model, lab.ids))
    _expect_device_error(r)
    _fix(r, _generate_fixed(lab, src, lab.ids))


@_scenario("model-on-cpu", 2, needs_gpu=True, before="""
model = AutoModelForCausalLM.from_pretrained(path)
input_ids = input_ids.to("cuda")
logits = model(input_ids).logits
""", after="""
model = AutoModelForCausalLM.from_pretrained(path)
model = model.to("cuda")
input_ids = input_ids.to("cuda")
logits = model(input_ids).logits
""")
def _model_on_cpu(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    emb = _name_of(src, src.get_input_embeddings().weight)
    if lab.gpu:
        ids = lab.ids.to("cuda:0")
        r.device = "cuda:0"
        r.tensors = [_row("input_ids", ids), _row(emb, src.get_input_embeddings().weight)]
        with torch.inference_mode():
            _attempt(r, lambda: _greedy(src, ids))
        model = copy.deepcopy(src).to("cuda:0")
        _fix(r, _generate_fixed(lab, model, ids), "cuda:0")
        return
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        ids = mode.from_tensor(lab.ids).to(FAKE)
    _simulated(r)
    r.tensors = [_row("input_ids", ids), _row(emb, src.get_input_embeddings().weight)]
    with mode, torch.no_grad():
        _attempt(r, lambda: _greedy(src, ids))
    _expect_device_error(r)
    _fix(r, _generate_fixed(lab, src, lab.ids))


@_scenario("block-left-behind", 3, needs_gpu=True, before="""
for name, child in model.transformer.named_children():
    if name != "h":
        child.to("cuda")
for block in model.transformer.h[1:]:   # h[0] forgotten
    block.to("cuda")
model.lm_head.to("cuda")
""", after="""
model = model.to("cuda")   # one call moves every parameter and buffer
# or let Accelerate place it:
# model = AutoModelForCausalLM.from_pretrained(path, device_map="auto")
""")
def _block_left_behind(lab: Lab, r: BreakResult) -> None:
    from playground.inspect_model import inspect

    src = lab.cpu_model()
    blocks_name, blocks = _blocks(src)
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
        _simulated(r)
    (n0, p0), (n1, p1) = first(model, 0), first(model, 1)
    r.tensors = [_row("input_ids", ids), _row(f"{left}.{n0}", p0), _row(f"{blocks_name}.1.{n1}", p1)]
    r.flagged_modules = inspect(model).flagged
    if lab.gpu:
        with torch.inference_mode():
            _attempt(r, lambda: _greedy(model, ids))
        model.to("cuda:0")
        _fix(r, _generate_fixed(lab, model, ids), "cuda:0")
        return
    with mode, torch.no_grad():
        _attempt(r, lambda: _greedy(model, ids))
    _expect_device_error(r)
    _fix(r, _generate_fixed(lab, src, lab.ids))


def _next_from_embeds(model, input_ids, dtype=None):
    """A pipeline that passes inputs_embeds (as prompt tuning or multimodal code does)."""
    embeds = model.get_input_embeddings()(input_ids)
    if dtype is not None:
        embeds = embeds.to(dtype)
    logits = model(inputs_embeds=embeds).logits
    return logits[:, -1].argmax(-1)


@_scenario("dtype-mismatch", 4, before="""
model = model.to(torch.bfloat16)
embeds = model.get_input_embeddings()(input_ids).float()
logits = model(inputs_embeds=embeds).logits
""", after="""
model = model.to(torch.bfloat16)
embeds = model.get_input_embeddings()(input_ids).to(model.dtype)
logits = model(inputs_embeds=embeds).logits
""")
def _dtype_mismatch(lab: Lab, r: BreakResult) -> None:
    low = lab.copy().to(torch.bfloat16)
    with torch.inference_mode():
        embeds32 = low.get_input_embeddings()(lab.ids).float()
    block0 = _blocks(low)[0] + ".0"
    n0, p0 = next(low.get_submodule(block0).named_parameters())
    r.tensors = [_row("inputs_embeds", embeds32), _row(f"{block0}.{n0}", p0),
                 _row(_name_of(low, low.get_input_embeddings().weight), low.get_input_embeddings().weight)]
    with torch.inference_mode():
        _attempt(r, lambda: _next_from_embeds(low, lab.ids, torch.float32))

    def fixed():
        with torch.inference_mode():
            nxt = _next_from_embeds(low, lab.ids, low.dtype)
        tok = lab.tokenizer.decode(nxt)
        return True, f"next token (bfloat16 model): {tok!r}", 1

    _fix(r, fixed)


def _empty_model(src):
    """The same architecture built on the meta device: shapes and dtypes, no data, no memory."""
    from accelerate import init_empty_weights
    from transformers import AutoModelForCausalLM

    with init_empty_weights():
        return AutoModelForCausalLM.from_config(src.config).eval()


def _weights(lab: Lab, src) -> dict:
    """The checkpoint's tensors: the bundled safetensors file, or the loaded model's state_dict."""
    from playground.models import BUNDLED_DIR

    if src is bundled()[0] and (BUNDLED_DIR / "model.safetensors").is_file():
        from safetensors.torch import load_file

        return load_file(str(BUNDLED_DIR / "model.safetensors"))
    return src.state_dict()


def _same_logits(a, b, ids) -> bool:
    with torch.inference_mode():
        return bool(torch.equal(a(ids).logits, b(ids).logits))


@_scenario("meta-weights-run", 5, before="""
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config)
output = generate(model, input_ids)
""", after="""
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config)
model.load_state_dict(load_file("model.safetensors"), assign=True)
model.tie_weights()
output = generate(model, input_ids)
""")
def _meta_weights_run(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    empty = _empty_model(src)
    emb = _name_of(empty, empty.get_input_embeddings().weight)
    r.device = "meta"
    r.tensors = [_row("input_ids", lab.ids), _row(emb, empty.get_input_embeddings().weight)]
    with torch.inference_mode():
        logits = empty(lab.ids).logits
        r.tensors.append(_row("logits", logits))
        _attempt(r, lambda: _greedy(empty, lab.ids))

    def fixed():
        empty.load_state_dict(_weights(lab, src), assign=True, strict=False)
        empty.tie_weights()
        ok = _same_logits(empty, src, lab.ids)
        ok_, text, n = _generate_fixed(lab, empty, lab.ids)()
        return ok and ok_, text, n

    _fix(r, fixed)


@_scenario("meta-weights-moved", 6, before="""
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config)
model = model.to("cpu")
""", after="""
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config)
model = model.to_empty(device="cpu")   # allocate, uninitialised
model.load_state_dict(load_file("model.safetensors"), strict=False)
model.tie_weights()                     # to_empty untied lm_head and wte
# buffers missing from the file (non-persistent, e.g. rotary inv_freq)
# hold garbage now: recompute them, or load with from_pretrained instead
""")
def _meta_weights_moved(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    empty = _empty_model(src)
    emb = _name_of(empty, empty.get_input_embeddings().weight)
    r.device = "meta"
    r.tensors = [_row(emb, empty.get_input_embeddings().weight)]
    _attempt(r, lambda: _move(empty, "cpu"))

    def fixed():
        empty.to_empty(device="cpu")
        weights = _weights(lab, src)
        empty.load_state_dict(weights, strict=False)
        empty.tie_weights()
        # non-persistent buffers (Llama's rotary inv_freq) are in no checkpoint: to_empty left them uninitialised
        for name, _ in empty.named_buffers():
            if name not in weights:
                empty.get_buffer(name).copy_(src.get_buffer(name))
        ok = _same_logits(empty, src, lab.ids)
        ok_, text, n = _generate_fixed(lab, empty, lab.ids)()
        return ok and ok_, text, n

    _fix(r, fixed)


def _offload_map(model, blocks_name: str, n_blocks: int) -> dict[str, str]:
    """A device map: everything on the CPU except the second half of the blocks, offloaded to disk."""
    dm: dict[str, str] = {}

    def walk(prefix: str, mod) -> None:
        for name, child in mod.named_children():
            full = prefix + name
            if full == blocks_name:
                for i in range(n_blocks):
                    dm[f"{full}.{i}"] = "cpu" if i < n_blocks // 2 else "disk"
            elif blocks_name.startswith(full + "."):
                walk(full + ".", child)
            else:
                dm[full] = "cpu"

    walk("", model)
    return dm


@_scenario("offloaded-moved", 7, before="""
model = dispatch_model(model, device_map=device_map,   # some blocks -> "disk"
                       main_device="cpu", offload_dir=folder)
model = model.to("cpu")
""", after="""
model = dispatch_model(model, device_map=device_map,
                       main_device="cpu", offload_dir=folder)
print(model.hf_device_map)   # leave placement to the hooks
output = generate(model, input_ids)
""")
def _offloaded_moved(lab: Lab, r: BreakResult) -> None:
    from accelerate import dispatch_model

    model = lab.copy()
    blocks_name, blocks = _blocks(model)
    dmap = _offload_map(model, blocks_name, len(blocks))
    with tempfile.TemporaryDirectory(prefix="breakit-offload-") as folder:
        logs: list[str] = []
        with _capture_logs(logs):
            model = dispatch_model(model, device_map=dmap, main_device="cpu", offload_dir=folder)
        r.warnings.extend(logs)
        r.hf_device_map = {k: str(v) for k, v in model.hf_device_map.items()}
        last = f"{blocks_name}.{len(blocks) - 1}"
        (n0, p0), (n1, p1) = (next(model.get_submodule(f"{blocks_name}.0").named_parameters()),
                              next(model.get_submodule(last).named_parameters()))
        r.tensors = [_row(f"{blocks_name}.0.{n0}", p0), _row(f"{last}.{n1}", p1)]
        _attempt(r, lambda: _move(model, "cpu"))
        ref = lab.cpu_model()

        def fixed():
            ok = _same_logits(model, ref, lab.ids)
            ok_, text, n = _generate_fixed(lab, model, lab.ids)()
            return ok and ok_, text, n

        _fix(r, fixed)


_TAG = threading.local()
_TAGGER_REGISTERED = False


def _tagger(storage) -> str | None:
    """A torch.serialization tagger: while the lab saves, storages are recorded as living on _TAG.location."""
    return getattr(_TAG, "location", None)


def _save_tagged(obj, path: str, location: str) -> None:
    """torch.save, recording every storage's location as `location` (what a save on that GPU records)."""
    global _TAGGER_REGISTERED
    if not _TAGGER_REGISTERED:
        # lower number = asked first; returns None (defer to PyTorch's own taggers) outside _save_tagged
        torch.serialization.register_package(3, _tagger, lambda storage, location: None)
        _TAGGER_REGISTERED = True
    _TAG.location = location
    try:
        torch.save(obj, path)
    finally:
        _TAG.location = None


@_scenario("cuda-checkpoint", 8, before="""
# saved on a GPU machine: torch.save(model.state_dict(), "model.pt")
state_dict = torch.load("model.pt")
""", after="""
state_dict = torch.load("model.pt", map_location="cpu", weights_only=True)
model.load_state_dict(state_dict)
""")
def _cuda_checkpoint(lab: Lab, r: BreakResult) -> None:
    state = lab.cpu_model().state_dict()
    # On a GPU host, a cuda:0 checkpoint loads fine; one past the last GPU reproduces the same failure there.
    location = f"cuda:{torch.cuda.device_count()}" if lab.gpu else "cuda:0"
    with tempfile.TemporaryDirectory(prefix="breakit-ckpt-") as folder:
        path = str(Path(folder) / "model.pt")
        _save_tagged(state, path, location)
        tags: list[str] = []
        torch.load(path, map_location=lambda storage, loc: tags.append(loc) or storage, weights_only=True)
        r.measured = {"checkpoint_bytes": Path(path).stat().st_size, "storage_locations_in_file": sorted(set(tags)),
                      "storages": len(tags)}
        name = next(iter(state))
        r.tensors = [_row(f"{name} (saved)", state[name])]
        _attempt(r, lambda: _load(path))

        def fixed():
            loaded = torch.load(path, map_location="cpu", weights_only=True)
            ok = all(torch.equal(loaded[k], state[k]) and loaded[k].device.type == "cpu" for k in state)
            return ok, f"{len(loaded)} tensors loaded onto cpu, equal to the saved ones: {ok}", None

        _fix(r, fixed)


@_scenario("conv-devices", 9, needs_gpu=True, before="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to("cuda")
x = torch.randn(1, 3, 32, 32)
y = conv(x)
""", after="""
conv = nn.Conv2d(3, 8, kernel_size=3, bias=False).to("cuda")
x = torch.randn(1, 3, 32, 32)
y = conv(x.to(conv.weight.device, conv.weight.dtype))
""")
def _conv_devices(lab: Lab, r: BreakResult) -> None:
    gen = torch.Generator().manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, kernel_size=3, bias=False)
    x = torch.randn(1, 3, 32, 32, generator=gen)
    if lab.gpu:
        conv, r.device = conv.to("cuda:0"), "cuda:0"
        r.tensors = [_row("x", x), _row("conv.weight", conv.weight)]
        _attempt(r, lambda: _convolve(conv, x))
    else:
        from torch._subclasses.fake_tensor import FakeTensorMode

        mode = FakeTensorMode(allow_non_fake_inputs=True)
        fconv = fake_copy(conv, mode)
        probe = BreakResult(r.scenario, r.number, "", "")
        with mode, torch.no_grad():
            _attempt(probe, lambda: _convolve(fconv, x))
        if probe.raised:  # a PyTorch whose fake convolution checks devices: use it
            probe_fields = {k: v for k, v in asdict(probe).items() if k.startswith(("raised", "error", "frame"))}
            for k, v in probe_fields.items():
                setattr(r, k, v)
            r.tensors = [_row("x", x), _row("conv.weight", fconv.weight)]
            _simulated(r)
        else:  # the fake convolution skips the type check: trip the same check with a dtype difference
            xb = x.to(torch.bfloat16)
            r.tensors = [_row("x", xb), _row("conv.weight", conv.weight)]
            with torch.no_grad():
                _attempt(r, lambda: _convolve(conv, xb))
            _simulated(r, "sim.conv_dtype", "")
            r.device = "cpu"
            x = xb

    def fixed():
        with torch.no_grad():
            y = conv(x.to(conv.weight.device, conv.weight.dtype))
        return True, f"y: shape {list(y.shape)}, {str(y.dtype).removeprefix('torch.')} on {y.device}", None

    _fix(r, fixed, r.device if r.device.startswith("cuda") else "cpu")


@_scenario("generate-device-type", 10, needs_gpu=True, before="""
model = AutoModelForCausalLM.from_pretrained(path)          # stays on the CPU
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to("cuda")
output = model.generate(input_ids, max_new_tokens=8)
""", after="""
model = AutoModelForCausalLM.from_pretrained(path)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(model.device)
output = model.generate(input_ids, max_new_tokens=8)
""")
def _generate_device_type(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    mask = lab.mask if lab.mask is not None else torch.ones_like(lab.ids)
    kwargs = dict(max_new_tokens=NEW_TOKENS, do_sample=False)
    if lab.gpu:
        ids, r.device = lab.ids.to("cuda:0"), "cuda:0"
        r.tensors = [_row("input_ids", ids), _row("attention_mask", mask), _row(
            _name_of(src, src.get_input_embeddings().weight), src.get_input_embeddings().weight)]
        _attempt(r, lambda: _generate(src, ids, mask.to("cuda:0"), **kwargs))
    else:
        # A shallow copy shares every weight; only its generation settings differ (see sim.meta_generate).
        shallow = copy.copy(src)
        cfg = copy.deepcopy(src.generation_config)
        cfg.eos_token_id = cfg.bos_token_id = cfg.pad_token_id = None
        object.__setattr__(shallow, "generation_config", cfg)
        ids = lab.ids.to("meta")
        r.tensors = [_row("input_ids", ids), _row("attention_mask", mask), _row(
            _name_of(src, src.get_input_embeddings().weight), src.get_input_embeddings().weight)]
        _attempt(r, lambda: _generate(shallow, ids, mask, **kwargs))
        _simulated(r, "sim.meta_generate", "")
        r.device = "meta"

    def fixed():
        with torch.inference_mode():
            out = src.generate(input_ids=lab.ids.to(src.device), attention_mask=mask.to(src.device), **kwargs)
        return True, lab.text(src, out), out.shape[1] - lab.ids.shape[1]

    _fix(r, fixed)


def _forward_ms(models: dict, ids, reps: int) -> dict[str, float]:
    """Fastest of `reps` forward passes per model, in milliseconds, after one warm-up each.

    The models take turns (A B C A B C ...) so that a burst of load from other
    processes hits them alike, and the minimum is kept: noise only ever adds time.
    """
    best = {name: float("inf") for name in models}
    with torch.inference_mode():
        for m in models.values():
            m(ids)
        for _ in range(reps):
            for name, m in models.items():
                dev = devices.torch_device_of(m)
                devices.sync(dev)
                t0 = time.perf_counter()
                m(ids)
                devices.sync(dev)
                best[name] = min(best[name], (time.perf_counter() - t0) * 1000)
    return best


def _long_ids(lab: Lab, n: int):
    """The prompt's ids repeated to n tokens: enough work for a timing to mean something."""
    reps = -(-n // lab.ids.shape[1])
    return lab.ids.repeat(1, reps)[:, :n]


@_scenario("fp16-on-cpu", 11, silent=True, before="""
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float16)   # on a CPU
""", after="""
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
# bfloat16 only where the CPU has AVX512-BF16 / AMX (see the timings)
""")
def _fp16_on_cpu(lab: Lab, r: BreakResult, tokens: int = 16, reps: int = 3) -> None:
    ids = _long_ids(lab, tokens)
    models = {name: lab.copy().to(devices.TORCH_DTYPES[name]) for name in ("float32", "float16", "bfloat16")}
    ms = _forward_ms(models, ids, reps)
    del models
    r.measured = {
        "prompt_tokens": ids.shape[1], "timed_runs_per_dtype": reps, "statistic": "fastest run",
        "float32_ms": round(ms["float32"], 2), "float16_ms": round(ms["float16"], 2),
        "bfloat16_ms": round(ms["bfloat16"], 2),
        "float16_vs_float32": round(ms["float16"] / ms["float32"], 2),
        "bfloat16_vs_float32": round(ms["bfloat16"] / ms["float32"], 2),
        "cpu": devices.cpu_name(), "cpu_native_fp16": devices.cpu_native_fp16(),
        "cpu_native_bf16": devices.cpu_native_bf16(),
    }
    r.tensors = [_row("input_ids", ids)]

    def fixed():
        m = lab.cpu_model()
        return True, lab.text(m, _greedy_inference(m, lab.ids)), NEW_TOKENS

    _fix(r, fixed)


def _greedy_inference(model, ids):
    with torch.inference_mode():
        return _greedy(model, ids)


def _saved_for_backward(model, ids) -> tuple[int, int]:
    """(tensors, bytes) autograd keeps for backward in one forward pass, weights excluded, each storage once."""
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: set[int] = set()
    total = [0, 0]

    def pack(x):
        s = x.untyped_storage()
        if s.data_ptr() not in weights and s.data_ptr() not in seen:
            seen.add(s.data_ptr())
            total[0] += 1
            total[1] += s.nbytes()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        out = model(ids).logits
    del out
    return total[0], total[1]


@_scenario("eval-inference-forgotten", 12, silent=True, before="""
model = AutoModelForCausalLM.from_pretrained(path)
model.train()                 # or a model left in training mode
logits = model(input_ids).logits
""", after="""
model = AutoModelForCausalLM.from_pretrained(path)
model.eval()                  # dropout off
with torch.inference_mode():  # no autograd graph, no saved activations
    logits = model(input_ids).logits
""")
def _eval_inference(lab: Lab, r: BreakResult, tokens: int = 32) -> None:
    ids = _long_ids(lab, tokens)
    trained = lab.copy().train()
    with torch.random.fork_rng(devices=[]), torch.inference_mode():
        a, b = trained(ids).logits, trained(ids).logits
    diff = float((a - b).abs().max())
    differ_at = int((a.argmax(-1) != b.argmax(-1)).sum())
    ref = lab.cpu_model()
    n_saved, bytes_saved = _saved_for_backward(ref, ids)
    dropout = [float(m.p) for m in trained.modules() if isinstance(m, torch.nn.Dropout)]
    r.measured = {
        "prompt_tokens": ids.shape[1],
        "train_mode_logits_max_abs_diff": round(diff, 6),
        "train_mode_positions_with_different_top_token": differ_at,
        "dropout_p": max(dropout) if dropout else 0.0,
        "no_inference_mode_saved_tensors": n_saved,
        "no_inference_mode_saved_bytes": bytes_saved,
        "weights_bytes": weights_bytes(ref),
    }
    r.tensors = [_row("input_ids", ids), _row("logits (train mode)", a)]

    def fixed():
        fixed_model = trained.eval()
        with torch.inference_mode():
            x, y = fixed_model(ids).logits, fixed_model(ids).logits
            n, nbytes = _saved_for_backward(fixed_model, ids)
        r.measured["fixed_logits_max_abs_diff"] = float((x - y).abs().max())
        r.measured["fixed_saved_bytes"] = nbytes
        ok = torch.equal(x, y) and nbytes == 0
        same = torch.equal(x, y)
        return ok, f"eval + inference_mode: two runs identical: {same}; bytes saved for backward: {nbytes}", None

    _fix(r, fixed)


# --------------------------------------------------------------------------- entry point and rendering


def run(scenario_id: str, model=None, tokenizer=None, prompt: str | None = None) -> BreakResult:
    """Run one mistake and its fix, live. Uses `model`/`tokenizer` when given, else the bundled model."""
    if not isinstance(scenario_id, str) or scenario_id.strip() not in SCENARIOS:
        raise UserError(f"Unknown mistake {str(scenario_id)[:60]!r}. Pick one of: "
                        + ", ".join(s["id"] for s in scenarios()) + ".")
    sc = SCENARIOS[scenario_id.strip()]
    if (model is None) != (tokenizer is None):
        raise UserError("Pass the model together with its tokenizer, or neither (the lab then uses the bundled model).")
    if model is None:
        model, tokenizer = threads.run(bundled, name="break-it")
    elif not isinstance(model, torch.nn.Module) or not hasattr(model, "get_input_embeddings"):
        raise UserError("The lab needs a Transformers causal language model. Load one first, or use the bundled model.")
    prompt = check_prompt(prompt) if prompt is not None else PROMPT
    r = BreakResult(scenario=sc.id, number=sc.number, title_en=t(f"{sc.id}.title", "en"),
                    title_zh=t(f"{sc.id}.title", "zh"), explanation_en=t(f"{sc.id}.explain", "en"),
                    explanation_zh=t(f"{sc.id}.explain", "zh"), fix_before=sc.before, fix_after=sc.after)
    with _RUN_LOCK:
        t0 = time.perf_counter()
        # in a thread that ends with the run (see playground.threads); the traceback's
        # frames are the scenario's own either way
        threads.run(sc.fn, Lab(model, tokenizer, prompt, r), r, name="break-it")
        r.seconds = time.perf_counter() - t0
    r.__dict__.pop("exc", None)
    return r


def _pre(code: str) -> str:
    return f"<pre>{html.escape(code)}</pre>"


def fix_table(before: str, after: str, lang: str = "en") -> str:
    """The before/after fix as a two-column HTML table of <pre> blocks."""
    return (f"<table><thead><tr><th>{t('ui.before', lang)}</th><th>{t('ui.after', lang)}</th></tr></thead>"
            f"<tbody><tr><td>{_pre(before)}</td><td>{_pre(after)}</td></tr></tbody></table>\n")


def result_markdown(r: BreakResult, lang: str = "en") -> str:
    """A BreakResult as Markdown (with HTML tables for the fix) in 'en' or 'zh'."""
    zh = lang == "zh"
    out = [f"### {r.number}. {html.escape(r.title_zh if zh else r.title_en)}\n"]
    if r.simulated:
        out.append(f"> **{t('ui.simulated', lang)}:** {html.escape(r.simulation_zh if zh else r.simulation_en)}\n")
    elif not r.cannot_run:
        out.append(f"_{t('ui.real', lang, device=r.device)}_\n")
    if r.cannot_run:
        out.append(f"**{t('ui.cannot_run', lang)}:** {html.escape(r.cannot_run)}\n")
    for note in r.notes:
        out.append(f"_{html.escape(note)}_\n")
    if r.warnings:
        out.append(f"**{t('ui.warnings', lang)}**\n")
        out.extend(_pre(w) for w in r.warnings)
    if r.raised:
        out.append(f"**{t('ui.error', lang)}:** `{r.error_type}`"
                   + (f" ({', '.join(r.error_bases[:2])})" if r.error_bases else "") + "\n")
        out.append(_pre(r.error_message or ""))
        if r.frame:
            out.append(f"\n**{t('ui.where', lang)}:** <code>{html.escape(r.frame)}</code>\n")
        if r.raised_in:
            out.append(f"{t('ui.raised_in', lang)}: <code>{html.escape(r.raised_in)}</code>\n")
    elif not r.cannot_run:
        out.append(f"**{t('ui.no_error', lang)}**\n")
    if r.tensors:
        out.append(f"\n**{t('ui.tensors', lang)}**\n")
        out.append(f"| {t('ui.name', lang)} | {t('ui.device', lang)} | {t('ui.dtype', lang)} | {t('ui.shape', lang)} |"
                   "\n|---|---|---|---|")
        for row in r.tensors:
            dev = f"{row.device} (fake)" if row.fake else row.device
            out.append(f"| `{html.escape(row.name)}` | {dev} | {row.dtype} | {list(row.shape)} |")
    out.append(f"\n**{t('ui.what', lang)}:** {r.explanation_zh if zh else r.explanation_en}\n")
    if r.measured:
        out.append(f"**{t('ui.measured', lang)}**\n\n| {t('ui.quantity', lang)} | {t('ui.value', lang)} |\n|---|---|")
        for k, v in r.measured.items():
            shown = fmt_bytes(v) if k.endswith("_bytes") and isinstance(v, int) else v
            label = t(f"m.{k}", lang)
            label = f"{label} <sub><code>{k}</code></sub>" if label != f"m.{k}" else f"<code>{k}</code>"
            out.append(f"| {label} | {html.escape(str(shown))} |")
        out.append("")
    if r.hf_device_map:
        out.append(f"**{t('ui.device_map', lang)}**\n\n| {t('ui.name', lang)} | {t('ui.device', lang)} |\n|---|---|")
        out.extend(f"| {html.escape(k)} | {html.escape(v)} |" for k, v in r.hf_device_map.items())
        out.append("")
    if r.flagged_modules:
        out.append(f"**{t('ui.flagged', lang, n=len(r.flagged_modules))}:** "
                   + ", ".join(f"`{html.escape(m)}`" for m in r.flagged_modules) + "\n")
    out.append(f"**{t('ui.fix', lang)}**\n")
    out.append(fix_table(r.fix_before, r.fix_after, lang))
    verdict = f"✅ {t('ui.fix_ok', lang)}" if r.fix_ok else f"❌ {t('ui.fix_failed', lang)}"
    if r.fix_seconds is not None:
        timing = (t("ui.tokens", lang, n=r.fix_tokens, seconds=r.fix_seconds) if r.fix_tokens
                  else t("ui.seconds", lang, seconds=r.fix_seconds))
        verdict += f" ({timing})"
    out.append(f"**{t('ui.fix_run', lang)}:** {verdict}\n")
    if r.fix_output:
        shown = r.fix_output if r.fix_output.strip() else repr(r.fix_output)  # whitespace-only text, made visible
        out.append(f"{t('ui.output', lang)}:\n{_pre(shown)}")
    if r.fix_error:
        out.append(_pre(r.fix_error))
    return "\n".join(out) + "\n"
