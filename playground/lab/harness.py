"""The lab's harness: the correct pipeline, changed in one place, run live; then its fix.

`run(sc)` runs a scenario (`playground.lab.scenarios`): the lab's pipeline with exactly one thing
changed, its GPU side on a device target (`lab.run.place(x)`, `with lab.run.running():`, see
`playground.lab.target`), what the libraries do recorded (`playground.lab.capture`); then the fix
script's own text (`run_fix`). `@scenario` declares one, with its expected outcome on each kind of
target as data. See docs/lab.md.
"""

from __future__ import annotations

import copy
import functools
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch._subclasses.fake_tensor import FakeTensor

from playground.core import threads
from playground.core.errors import UserError
from playground.core.i18n import W, register, said
from playground.core.inputs import DEFAULT_PROMPT
from playground.core.paths import BUNDLED_DIR
from playground.core.units import fmt_bytes
from playground.hw import devices
from playground.hw.census import weights_bytes
from playground.lab import apart, scripts
from playground.lab.capture import attempt, fix, frames_of, traceback_lines_of
from playground.lab.outcome import ANY_MISMATCH, Outcome
from playground.lab.result import BreakResult, TensorRow
from playground.lab.target import KINDS, SIMULATED, Run, Target, for_scenario

NEW_TOKENS = 8  # tokens each fixed pipeline generates
COPY_LIMIT = 600 * 2**20  # scenarios that copy the model use the bundled one above this size
_RUN_LOCK = threading.Lock()  # one scenario at a time: warning capture and the save tagger are process-wide
# What each scenario is about, for the listing (break_it_scenarios) and the lesson map.
GROUPS = ("device", "dtype", "meta", "checkpoint", "silent", "training", "offload")


@dataclass(frozen=True)
class Scenario:
    """One mistake: its code (`fn(lab, result)`), its words (i18n keys, registered by `scenario`), the fix
    as code, and what it is expected to do on each kind of target (`expect`, keyed by `target.KINDS` or "*")."""

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
    expect: dict[str, Outcome] = field(default_factory=dict)
    devices: int = 1  # GPUs the mistake needs to show (2: simulated with two fake ones where fewer are present)
    real_on: tuple[str, ...] = ("cuda", "mps")  # the kinds of GPU it runs on for real; simulated elsewhere
    stand_in: str = "fake"  # what simulates the GPU: "fake" tensors on a fake cuda device, or "meta"
    # a tutorial's worry that measures harmless (its "mistake" and "fix" are two orders that both work): the
    # page says so, instead of calling it a mistake and its other order a fix
    harmless: bool = False
    # its simulation cannot raise (no stand-in device refuses what the real one does): the run shows the real
    # device's own words, read from the installed library, beside what the stand-in accepted
    wording_only: bool = False
    # the device types on which its broken script runs in a Python process of its own (`lab/apart.py`): there
    # the mistake stops a kernel with a device-side assert, which leaves the process's CUDA context unusable
    apart_on: tuple[str, ...] = ()

    def expected(self, kind: str) -> Outcome | None:
        """The outcome on a target of this kind (cuda2 falls back to cuda, every kind to "*")."""
        for key in (kind, "cuda" if kind == "cuda2" else kind, "*"):
            if key in self.expect:
                return self.expect[key]
        return None


def scenario(sid: str, number: int, *, title: W, explain: W, before: str, after: str, group: str,
             script: scripts.Script, expect: Outcome | dict[str, Outcome], needs_gpu: bool = False,
             silent: bool = False, labels: dict[str, W] | None = None, bundled_only: bool = False,
             devices: int = 1, real_on: tuple[str, ...] = ("cuda", "mps"),
             stand_in: str = "fake", words: dict[str, W] | None = None,
             harmless: bool = False, wording_only: bool = False,
             apart_on: tuple[str, ...] = ()) -> Callable[[Callable], Scenario]:
    """Decorate a scenario's function: the name it is defined under becomes the `Scenario`. Its words stay
    beside its code and are registered as i18n keys: scenario.<id>.title, .explain, .label.<measured key>,
    and its own other words (`words`: a simulation's note, say) as scenario.<id>.<name>, which its code says
    by those keys."""
    if group not in GROUPS:
        raise ValueError(f"{sid}: group {group!r} is not one of {GROUPS}")
    expect = {"*": expect} if isinstance(expect, Outcome) else dict(expect)
    if not set(expect) <= {*KINDS, "*"}:
        raise ValueError(f"{sid}: expected outcomes keyed by {sorted(set(expect) - {*KINDS, '*'})}, not {KINDS}")
    title, explain = register(f"scenario.{sid}.title", title), register(f"scenario.{sid}.explain", explain)
    labels = {k: register(f"scenario.{sid}.label.{k}", w) for k, w in (labels or {}).items()}
    for name, w in (words or {}).items():
        register(f"scenario.{sid}.{name}", w)

    def make(fn: Callable) -> Scenario:
        return Scenario(sid, number, fn, title, explain, before.strip("\n"), after.strip("\n"), needs_gpu, silent,
                        labels, group, script, bundled_only, expect, devices, real_on, stand_in, harmless, wording_only,
                        apart_on)

    return make


# --------------------------------------------------------------------------- the lab's model and pipeline


@functools.lru_cache(maxsize=1)
def bundled():
    """The bundled model and tokenizer, loaded once per process (float32, CPU, eval mode)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # deferred (start-up): catalog.import_model_classes
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
    """What one scenario runs on: a CPU model, its tokenizer, the prompt's ids, and `run`, its device
    target's run (`lab.run.place(x)`, `with lab.run.running(): ...`).

    The passed model is used when it lives on the CPU and is small enough to copy
    (scenarios break private copies, never the shared model); otherwise the
    bundled model is, and the result says so.
    """

    def __init__(self, model, tokenizer, prompt: str, result: BreakResult, bundled_only: bool = False,
                 target: Target = SIMULATED):
        self.r = result
        self.run = Run(target)  # where the scenario's GPU side runs
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

    def cpu_model(self):
        return self.src

    def copy(self):
        """A private deep copy to break (the shared model is never changed)."""
        return copy.deepcopy(self.src)

    def names(self, model=None, **more) -> dict:
        """What a script's blanked lines define (see `playground.lab.scripts`): the same `device`
        expression's value, the bundled model's folder, the tokenizer, and a private copy of the model."""
        return {"path": str(BUNDLED_DIR), "device": scripts.device(), "tokenizer": self.tokenizer,
                "model": model if model is not None else self.copy(), **more}


def attempt_script(lab: Lab, sc: Scenario, r: BreakResult, **more) -> dict:
    """Run the broken script's own text here (a live mistake); its globals come back, for the tensor table.
    On a device type in `sc.apart_on` it runs as written in a process of its own instead (no globals come back)."""
    names = lab.names(**more)
    if not sc.needs_gpu:  # where its script ran: the script's own `device` (a GPU scenario's target says it)
        r.device = devices.name(names["device"])
    if torch.device(names["device"]).type in sc.apart_on:
        attempt_apart(sc, r, names["device"])
        return {}
    out: list[str] = []
    ns = scripts.namespace(names, out)
    attempt(r, lambda: scripts.run(sc.script.in_process("broken"), ns, "<broken script>"))
    r.broken_output = "".join(out).strip()
    return ns


def attempt_apart(sc: Scenario, r: BreakResult, device: str) -> None:
    """The broken script, complete, run with `python` in a process of its own (it picks `device` itself): what
    it raised and printed, and the lines its device's kernel printed for a device-side assert."""
    done = apart.run_apart(sc.script.text("broken"))
    if done.timed_out:
        r.cannot_run = said("lab.apart.timeout", seconds=apart.TIMEOUT_SECONDS)
        return
    r.raised, r.error_type, r.error_bases = done.raised, done.error_type, done.error_bases
    r.error_message = (done.error_message or "")[:4000] if done.raised else None
    r.frame, r.raised_in = frames_of(done.frames)
    r.traceback, r.broken_output = traceback_lines_of(done.frames), done.output
    r.device_lines = done.kernel_lines
    r.notes.append(said("lab.apart", device=device,
                        kernel="; ".join(done.kernel_lines[:2]) or said("lab.apart.no_kernel_line")))


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


def row(name: str, x: torch.Tensor, note: str = "") -> TensorRow:
    """A row of the tensors-involved table; `note` (an i18n key, `ui.row.*`) says which copy of it the row is."""
    return TensorRow(name, str(x.device), str(x.dtype).removeprefix("torch."), list(x.shape),
                     isinstance(x, FakeTensor), said(note) if note else None)


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


def half_moved_model(model=None):
    """A fake copy of `model` (default: the bundled one) on fake cuda:0 with its first block left on the CPU."""
    model = model if model is not None else bundled()[0]
    name, _ = blocks(model)
    return Run(SIMULATED).place(model, left_behind=f"{name}.0")


def mark(lab: Lab, r: BreakResult, key: str = "sim.fake_cuda", differs: str = "sim.fake_cuda_differs",
         device: str | None = None, note: str | None = None) -> None:
    """Where the broken run happened (`device`, or the target's label); a simulated run says how (`key`),
    and, with `differs`, that a real GPU words the message differently; a real one adds `note`, if any."""
    target = lab.run.target
    r.simulated, r.device = target.simulated, device or target.label
    if target.simulated:
        r.simulation = said("sim.both", how=said(key), differs=said(differs)) if differs else said(key)
    elif note:
        r.notes.append(said(note, device=target.device))


def expect_device_error(lab: Lab, r: BreakResult) -> None:
    """A fake run must fail on PyTorch's device check, in a wording the installed torch has (FakeTensor's own
    changed between versions: `gpu_wording.fake_template`); anything else is a limit of the simulation."""
    exc = getattr(r, "exc", None)
    if lab.run.target.stand_in != "fake" or exc is None or re.search(str(ANY_MISMATCH), str(exc), re.S):
        return
    r.cannot_run = said("sim.cannot_run", error_type=r.error_type, raised_in=r.raised_in,
                        message=(r.error_message or "")[:300])
    r.raised, r.error_type, r.error_bases, r.error_message, r.frame, r.raised_in, r.traceback = (
        False, None, [], None, None, None, [])


def run(sc: Scenario, model=None, tokenizer=None, prompt: str = DEFAULT_PROMPT,
        target: Target | None = None) -> BreakResult:
    """Run one mistake and its fix, live, on `model`/`tokenizer` (a private copy where the scenario
    breaks it), or on the bundled model when none is given; its GPU side on `target` (default: the
    page's), or on the simulated target that stands in for it (`target.for_scenario`)."""
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
        lab = Lab(model, tokenizer, prompt, r, sc.bundled_only, for_scenario(sc, target))
        threads.run(sc.fn, lab, r, name="break-it")
        r.seconds = time.perf_counter() - t0
    r.__dict__.pop("exc", None)
    return r
