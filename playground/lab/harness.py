"""The lab's harness: the correct pipeline, changed in one place, run live; then its fix.

Each scenario (in `playground.lab.scenarios`, one module per family of mistakes) is
one classic device or dtype mistake. It runs the lab's pipeline (greedy decoding,
one forward pass per token, on the loaded model or the bundled one) with exactly
one thing changed, and records what the installed libraries do about it (see
`playground.lab.capture`); then it runs the fixed pipeline for real.

Honest reproduction without a GPU: on a host without CUDA the model's tensors are
made *fake* (PyTorch's `FakeTensorMode`, the machinery `torch.compile` traces with):
each carries a device (`cuda:0`), a dtype and a shape, but no data, and operators
run PyTorch's own device checks, which raise PyTorch's own message. Every such
result is marked `simulated`, and where PyTorch's real GPU message differs from the
fake one it is shown beside it (`playground.lab.gpu_wording`). Silent mistakes raise
nothing: they report `measured` numbers instead.

Every scenario also carries two complete scripts (`playground.lab.scripts`): the
mistake and its fix, runnable as files. The fix the lab runs is the fix script's own
text (`run_fix`), and a live mistake's run is the broken script's (`attempt_script`).
"""

from __future__ import annotations

import copy
import functools
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorDeviceMismatchError, FakeTensorMode
from transformers import AutoModelForCausalLM, AutoTokenizer

from playground.core import threads
from playground.core.errors import UserError
from playground.core.i18n import W, register, said
from playground.core.inputs import DEFAULT_PROMPT
from playground.core.paths import BUNDLED_DIR
from playground.core.units import fmt_bytes
from playground.hw import devices
from playground.hw.memory import weights_bytes
from playground.lab import scripts
from playground.lab.capture import attempt, fix
from playground.lab.result import BreakResult, TensorRow

NEW_TOKENS = 8  # tokens each fixed pipeline generates
COPY_LIMIT = 600 * 2**20  # scenarios that copy the model use the bundled one above this size
FAKE = "cuda:0"  # the fake device of simulated runs
_RUN_LOCK = threading.Lock()  # one scenario at a time: warning capture and the save tagger are process-wide
# What each scenario is about, for the listing (break_it_scenarios) and the lesson map.
GROUPS = ("device", "dtype", "meta", "checkpoint", "silent", "training")


@dataclass(frozen=True)
class Scenario:
    """One mistake: its code (`fn(lab, result)`), its words (i18n keys, registered by `scenario`), the fix
    as code."""

    id: str
    number: int
    fn: Callable
    title: str  # scenario.<id>.title
    explain: str  # scenario.<id>.explain
    before: str
    after: str
    needs_gpu: bool = False
    silent: bool = False
    labels: dict[str, str] = field(default_factory=dict)  # what each `measured` key means: its i18n key
    group: str = "device"
    script: scripts.Script | None = None
    bundled_only: bool = False  # its scripts read the bundled model's files: it runs on the bundled model


def scenario(sid: str, number: int, *, title: W, explain: W, before: str, after: str, group: str,
             script: scripts.Script, needs_gpu: bool = False, silent: bool = False,
             labels: dict[str, W] | None = None, bundled_only: bool = False) -> Callable[[Callable], Scenario]:
    """Decorate a scenario's function: the name it is defined under becomes the `Scenario`. Its words stay
    here, beside its code, and are registered as i18n keys (scenario.<id>.title, .explain, .label.<key>)."""
    if group not in GROUPS:
        raise ValueError(f"{sid}: group {group!r} is not one of {GROUPS}")
    title, explain = register(f"scenario.{sid}.title", title), register(f"scenario.{sid}.explain", explain)
    labels = {k: register(f"scenario.{sid}.label.{k}", w) for k, w in (labels or {}).items()}

    def make(fn: Callable) -> Scenario:
        return Scenario(sid, number, fn, title, explain, before.strip("\n"), after.strip("\n"), needs_gpu, silent,
                        labels, group, script, bundled_only)

    return make


# --------------------------------------------------------------------------- the lab's model and pipeline


@functools.lru_cache(maxsize=1)
def bundled():
    """The bundled model and tokenizer, loaded once per process (float32, CPU, eval mode)."""
    model = AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(BUNDLED_DIR)


def greedy(model, input_ids, steps: int = NEW_TOKENS):
    """The lab's pipeline: greedy decoding, one forward pass per new token (no cache)."""
    for _ in range(steps):
        logits = model(input_ids).logits
        next_id = logits[:, -1:].argmax(-1)
        input_ids = torch.cat([input_ids, next_id], dim=-1)
    return input_ids


# The other pipelines' single steps, named so that the frame where an error surfaces reads as code.
def move(model, device):
    return model.to(device)


def load_checkpoint(path):
    return torch.load(path, weights_only=True)  # the mistake is the missing map_location


def convolve(conv, x):
    return conv(x)


def call_generate(model, input_ids, attention_mask, **kwargs):
    return model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)


class Lab:
    """What one scenario runs on: a CPU model, its tokenizer, the prompt's ids, and notes.

    The passed model is used when it lives on the CPU and is small enough to copy
    (scenarios break private copies, never the shared model); otherwise the
    bundled model is, and the result says so.
    """

    def __init__(self, model, tokenizer, prompt: str, result: BreakResult, bundled_only: bool = False):
        self.r = result
        on_cpu = devices.torch_device_of(model).type == "cpu"
        size = weights_bytes(model)
        if bundled_only:
            self.src, self.tokenizer = bundled()
        elif on_cpu and size <= COPY_LIMIT:
            self.src, self.tokenizer = model, tokenizer
        else:
            self.src, self.tokenizer = bundled()
            if size > COPY_LIMIT:
                result.notes.append(said("sim.big_model", size=fmt_bytes(size)))
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

    def names(self, model=None, **more) -> dict:
        """What a script's blanked lines define (see `playground.lab.scripts`): the same `device`
        expression, the bundled model's folder, the tokenizer, and a private copy of the model."""
        device = "cuda" if torch.cuda.is_available() else "cpu"
        return {"path": str(BUNDLED_DIR), "device": device, "tokenizer": self.tokenizer,
                "model": model if model is not None else self.copy(), **more}


def attempt_script(lab: Lab, sc: Scenario, r: BreakResult, **more) -> dict:
    """Run the broken script's own text here (a live mistake); its globals come back, for the tensor table."""
    out: list[str] = []
    ns = scripts.namespace(lab.names(**more), out)
    attempt(r, lambda: scripts.run(sc.script.in_process("broken"), ns, "<broken script>"))
    r.broken_output = "".join(out).strip()
    return ns


def run_fix(lab: Lab, sc: Scenario, r: BreakResult, **more) -> dict:
    """Run the fix script's own text here, timed: what the page shows is what ran."""
    out: list[str] = []
    ns = scripts.namespace(lab.names(**more), out)

    def go():
        scripts.run(sc.script.in_process("fix"), ns, "<fix script>")
        return True, "".join(out).strip(), None

    fix(r, go, ns["device"])
    if not r.fix_ok and out:
        r.fix_output = "".join(out).strip()
    return ns


def row(name: str, x: torch.Tensor) -> TensorRow:
    return TensorRow(name, str(x.device), str(x.dtype).removeprefix("torch."), list(x.shape),
                     isinstance(x, FakeTensor))


def name_of(model, tensor) -> str:
    for name, p in model.named_parameters():
        if p is tensor:
            return name
    return "weight"


def blocks(model) -> tuple[str, torch.nn.ModuleList]:
    """The model's list of transformer blocks (GPT-2's transformer.h, Llama's model.layers, ...)."""
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.ModuleList) and len(mod) >= 2 and name.split(".")[-1] in ("h", "layers", "blocks"):
            return name, mod
    raise UserError.of("err.lab_blocks")


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
    model = model if model is not None else bundled()[0]
    name, _ = blocks(model)
    return fake_copy(model, FakeTensorMode(allow_non_fake_inputs=True), FAKE, left_behind=f"{name}.0")


def dtype_split_model(model=None, dtype: torch.dtype = torch.bfloat16):
    """A real copy of `model` with its first block cast to `dtype`: a half-converted model, runnable on a CPU."""
    m = copy.deepcopy(model if model is not None else bundled()[0])
    _name, mods = blocks(m)
    mods[0].to(dtype)
    return m


def simulated(r: BreakResult, key: str = "sim.fake_cuda", differs: str = "sim.fake_cuda_differs") -> None:
    r.simulated, r.device = True, "fake " + FAKE
    r.simulation = said("sim.both", how=said(key), differs=said(differs)) if differs else said(key)


def expect_device_error(r: BreakResult) -> None:
    """A fake run must fail on PyTorch's device check; anything else is a limit of the simulation."""
    exc = getattr(r, "exc", None)
    if exc is None or isinstance(exc, FakeTensorDeviceMismatchError) or "same device" in str(exc):
        return
    r.cannot_run = said("sim.cannot_run", error_type=r.error_type, raised_in=r.raised_in,
                        message=(r.error_message or "")[:300])
    r.raised, r.error_type, r.error_bases, r.error_message, r.frame, r.raised_in, r.traceback = (
        False, None, [], None, None, None, [])


def run(sc: Scenario, model=None, tokenizer=None, prompt: str = DEFAULT_PROMPT) -> BreakResult:
    """Run one mistake and its fix, live, on `model`/`tokenizer` (a private copy where the scenario
    breaks it), or on the bundled model when none is given."""
    if model is None:
        model, tokenizer = threads.run(bundled, name="break-it")
    elif not isinstance(model, torch.nn.Module) or not hasattr(model, "get_input_embeddings"):
        raise UserError.of("err.lab_model")
    r = BreakResult(scenario=sc.id, number=sc.number, title=said(sc.title), explanation=said(sc.explain),
                    fix_before=sc.before, fix_after=sc.after,
                    group=sc.group, broken_code=sc.script.text("broken"), fix_code=sc.script.text("fix"))
    with _RUN_LOCK:
        t0 = time.perf_counter()
        # in a thread that ends with the run (see playground.core.threads); the traceback's
        # frames are the scenario's own either way
        threads.run(sc.fn, Lab(model, tokenizer, prompt, r, sc.bundled_only), r, name="break-it")
        r.seconds = time.perf_counter() - t0
    r.__dict__.pop("exc", None)
    return r
