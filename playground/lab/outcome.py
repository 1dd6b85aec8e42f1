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

# The two wordings of PyTorch's device mismatch (torch 2.13): TensorIterator's and FakeTensor's
# "...but found at least two devices, cuda:0 and cpu!", and the one a CUDA kernel's generated wrapper
# raises, "...but got index is on cpu, different from other tensors on cuda:0 (when checking argument
# in method wrapper_CUDA__index_select)" (measured on a GPU: ../shared/NOTES.md; built here from
# libtorch_cpu.so by gpu_wording.same_device).
_SAME = r"Expected all tensors to be on the same device, but "
# MPS kernels that skip the device check read a CPU tensor's storage as if it were on the GPU
# (PyTorch issues and forums; several operators still do in 2.x).
MPS_PLACEHOLDER = r"Placeholder storage has not been allocated on MPS device!"


def same_device(a: str, b: str) -> str:
    r"""A pattern for the device mismatch between devices `a` and `b` (patterns themselves, e.g.
    r"cuda:\d+"): either wording, either order."""
    return (_SAME + rf"(found at least two devices, ({a} and {b}|{b} and {a})!"
            rf"|got \w+ is on ({a}|{b}), different from other tensors on ({a}|{b}))")


def or_mps_placeholder(pattern: str) -> str:
    return f"(?:{pattern})|{MPS_PLACEHOLDER}"


@dataclass(frozen=True)
class Outcome:
    """`raises`: the exception class (None: a silent mistake, nothing raised); `pattern`: a regex its
    live message contains; `warning`: a regex one captured warning contains."""

    raises: type[BaseException] | None = None
    pattern: str = ""
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
            elif self.pattern and not re.search(self.pattern, message or "", re.S):
                out.append(f"message {(message or '')[:300]!r} does not match {self.pattern!r}")
        if self.warning and not any(re.search(self.warning, w, re.S) for w in warnings):
            out.append(f"no warning matches {self.warning!r}: {warnings}")
        return out

    def matches(self, text: str) -> bool:
        """Whether a sentence (a real GPU's message, built from the library) fits this outcome's wording."""
        return bool(re.search(self.pattern or self.warning, text, re.S))


# A tensor on the GPU meeting one left on the CPU, on each kind of target: fake cuda:0 (FakeTensor's
# wording), a real CUDA kernel (the wrapper's or TensorIterator's wording), MPS (either, or the placeholder).
GPU_MEETS_CPU = {
    "simulated": Outcome(RuntimeError, same_device("cuda:0", "cpu")),
    "cuda": Outcome(RuntimeError, same_device(r"cuda:\d+", "cpu")),
    "mps": Outcome(RuntimeError, or_mps_placeholder(same_device("mps:0", "cpu"))),
}
