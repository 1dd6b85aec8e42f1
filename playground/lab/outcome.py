"""What a scenario is expected to do on each kind of target, as data: the exception and its wording.

Each scenario declares its outcomes in its decorator, keyed by the target's kind (`target.KINDS`:
simulated, cuda, cuda2 for a host with two GPUs or more, mps; `*` for every kind, for a mistake
that does not involve a GPU). The tests check every live result against them, on every target
present; on a host without a GPU the real-GPU forms are checked against the sentences the
installed library's own templates give (`playground.lab.gpu_wording`). Patterns are loose where
the wording varies between PyTorch versions or between a real kernel and a fake one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from playground.lab import gpu_wording

# MPS kernels that skip the device check read a CPU tensor's storage as if it were on the GPU
# (PyTorch issues and forums; several operators still do in 2.x).
MPS_PLACEHOLDER = r"Placeholder storage has not been allocated on MPS device!"


class Wording:
    """A pattern built from the installed libraries' words each time it is read (from their texts, read once
    and kept by `gpu_wording`), not when a scenario is declared: reading libtorch's strings takes a moment,
    and the page imports the scenarios at start-up."""

    def __init__(self, build: Callable[[], str]) -> None:
        self._build = build

    def __str__(self) -> str:
        return self._build()


def same_device(a: str, b: str) -> Wording:
    r"""A pattern for the device mismatch between devices `a` and `b` (patterns themselves, e.g. r"cuda:\d+"),
    either order, in every wording the installed torch has (`gpu_wording.mismatch_patterns`): FakeTensor's, which
    changed between versions, and a real kernel's two: TensorIterator's "...but found at least two devices, cuda:0
    and cpu!" and a generated wrapper's "...but got index is on cpu, different from other tensors on cuda:0 (when
    checking argument in method wrapper_CUDA__index_select)" (measured on a GPU: ../shared/NOTES.md)."""
    return Wording(lambda: "|".join(f"(?:{p})" for p in gpu_wording.mismatch_patterns(a, b)) or "(?!)")


def or_mps_placeholder(pattern: Wording | str) -> Wording:
    return Wording(lambda: f"(?:{pattern})|{MPS_PLACEHOLDER}")


@dataclass(frozen=True)
class Outcome:
    """`raises`: the exception class (None: a silent mistake, nothing raised); `pattern`: a regex its
    live message contains; `warning`: a regex one captured warning contains."""

    raises: type[BaseException] | None = None
    pattern: str | Wording = ""
    warning: str = ""

    def problems(self, raised: bool, error_type: str | None, error_bases: list[str], message: str | None,
                 warnings: list[str]) -> list[str]:
        """What in a live result disagrees with this outcome (empty when it agrees)."""
        out = []
        if self.raises is None and raised:
            out.append(f"raised {error_type}: {(message or '')[:200]}, expected nothing")
        if self.raises is not None:
            if not raised:
                out.append(f"raised nothing, expected {self.raises.__name__}")
            elif self.raises.__name__ not in [error_type, *error_bases]:
                out.append(f"raised {error_type}, expected {self.raises.__name__}")
            elif self.pattern and not re.search(str(self.pattern), message or "", re.S):
                out.append(f"message {(message or '')[:300]!r} does not match {str(self.pattern)!r}")
        if self.warning and not any(re.search(self.warning, w, re.S) for w in warnings):
            out.append(f"no warning matches {self.warning!r}: {warnings}")
        return out

    def matches(self, text: str) -> bool:
        """Whether a sentence (a real GPU's message, built from the library) fits this outcome's wording."""
        return bool(re.search(str(self.pattern or self.warning), text, re.S))


# Any two devices: what a fake run must fail on (anything else is a limit of the simulation, `harness`).
ANY_MISMATCH = same_device(r"\S+?", r"\S+?")
# A tensor on the GPU meeting one left on the CPU, on each kind of target: fake cuda:0 (FakeTensor's
# wording), a real CUDA kernel (the wrapper's or TensorIterator's wording), MPS (either, or the placeholder).
GPU_MEETS_CPU = {
    "simulated": Outcome(RuntimeError, same_device("cuda:0", "cpu")),
    "cuda": Outcome(RuntimeError, same_device(r"cuda:\d+", "cpu")),
    "mps": Outcome(RuntimeError, or_mps_placeholder(same_device("mps:0", "cpu"))),
}
