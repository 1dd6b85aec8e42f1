"""What one run of the lab returns: the mistake, what the libraries raised, the fix and its run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from playground.core.i18n import Said, bilingual


@dataclass
class TensorRow:
    name: str
    device: str
    dtype: str
    shape: list[int]
    fake: bool = False
    note: Said | None = None  # which copy of the tensor the row is ("in the file", "train mode"), in words


@dataclass
class BreakResult:
    scenario: str
    number: int
    title: Said  # the scenario's (scenario.<id>.title)
    raised: bool = False
    error_type: str | None = None  # the exception's class name, e.g. "RuntimeError"
    error_bases: list[str] = field(default_factory=list)  # its base classes, nearest first
    error_message: str | None = None  # str(exception), live
    frame: str | None = None  # "playground/lab/harness.py:123 in greedy: logits = model(input_ids).logits"
    raised_in: str | None = None  # the deepest frame: the library function that raised
    traceback: list[str] = field(default_factory=list)  # the last frames, as Python prints them
    warnings: list[str] = field(default_factory=list)  # warnings and log lines the libraries printed
    tensors: list[TensorRow] = field(default_factory=list)
    device: str = "cpu"  # where the broken run happened: "cpu", "cuda:0", "fake cuda:0", "meta"
    simulated: bool = False
    simulation: Said | None = None  # how a simulated run was made (None when it ran for real)
    cannot_run: Said | None = None  # why it could not run here (None when it ran)
    explanation: Said | None = None  # the scenario's (scenario.<id>.explain)
    fix_before: str = ""
    fix_after: str = ""
    fix_ok: bool = False
    fix_output: str = ""
    fix_seconds: float | None = None
    fix_tokens: int | None = None
    fix_error: str = ""
    measured: dict = field(default_factory=dict)
    findings: list[Said] = field(default_factory=list)  # what the measurements say, chosen from them
    hf_device_map: dict | None = None
    flagged_modules: list[str] = field(default_factory=list)  # from the Inspect view of the broken model
    notes: list[Said] = field(default_factory=list)
    seconds: float = 0.0
    group: str = ""  # one of harness.GROUPS
    broken_code: str = ""  # the complete script with the mistake (runs as written from the repository root)
    fix_code: str = ""  # the complete fixed script: its body is what the lab's fix ran
    broken_output: str = ""  # what the broken script printed before it raised (live runs)
    device_lines: list[str] = field(default_factory=list)  # what the device printed: a kernel's failed assert
    real_gpu_message: str = ""  # simulated runs: the sentence a real GPU raises with the installed torch
    real_gpu_how: Said | None = None  # how real_gpu_message was built, from which library template
    waiting: int | None = None  # other visitors waiting for the lane when the run ended (the page's queue)

    def to_dict(self) -> dict:
        """The API's dict: notes and the reason it could not run said in English; the title, the
        simulation and the explanation in both languages (`title_en`, `title_zh`, ...), from their keys."""
        d = bilingual(asdict(self), "title", "simulation", "explanation")
        d["cannot_run"] = d["cannot_run"] or ""
        d["real_gpu_how"] = d["real_gpu_how"] or ""
        return d

    def diagnose_text(self) -> str:
        """What a learner would paste into the diagnoser: the warnings and the error line."""
        lines = list(self.warnings) + list(self.device_lines)  # a kernel's assert prints before the traceback
        if self.raised:
            lines += ["Traceback (most recent call last):", *self.traceback, f"{self.error_type}: {self.error_message}"]
        return "\n".join(lines)
