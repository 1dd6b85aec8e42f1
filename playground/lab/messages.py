"""The diagnoser's catalog: the installed libraries' device-, dtype- and meta-related messages, each
mapped to the mistake behind it.

`catalog()` reads them once per process from PyTorch's shared libraries and the PyTorch,
Transformers and Accelerate sources in SOURCES; KINDS holds patterns that *select* messages,
never messages. `find(normalise(text))` says which entries a pasted text contains. See docs/lab.md.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import accelerate
import torch
import transformers

from playground.lab.library_text import PLACEHOLDER, TORCH_LIB, Template, python_templates, rodata_strings

# The files whose messages are read: (package, paths inside it). A path missing in another version is skipped.
SOURCES = {
    torch: ("serialization.py", "nn/modules/module.py", "nn/parallel/data_parallel.py", "cuda/__init__.py",
            "utils/data/dataloader.py", "amp/autocast_mode.py", "_prims_common/__init__.py",
            "_subclasses/fake_tensor.py", "_tensor.py"),
    transformers: ("generation/utils.py", "modeling_utils.py", "pytorch_utils.py", "integrations/accelerate.py",
                   "integrations/bitsandbytes.py"),
    accelerate: ("big_modeling.py", "hooks.py", "utils/modeling.py", "utils/offload.py"),
}
LIBRARIES = ("libtorch_cpu.so", "libtorch_python.so", "libc10.so")

# What a message is about, read from its own words (first match wins), and the mistakes behind it, best first.
KINDS: list[tuple[str, str, tuple[str, ...]]] = [
    ("numpy", r"device type tensor to numpy", ("numpy-on-gpu",)),
    ("data-parallel", r"device_ids\[0\]|parameters and buffers on device", ("dataparallel-not-moved",)),
    ("state-dict", r"(?:missing|unexpected) key\(s\) in state_dict|error\(s\) in loading state_dict",
     ("dataparallel-prefix", "strict-false-hides")),
    ("deserialize", r"deserialize object on|map_location", ("cuda-checkpoint", "optimizer-state-from-gpu")),
    ("generate", r"device type different", ("generate-device-type",)),
    ("offload", r"offloaded to|dispatched using accelerate hooks", ("offloaded-moved",)),
    ("quantized", r"bitsandbytes model|\b[48]-bit model", ("quantized-moved",)),
    ("meta", r"meta tensor|meta device|meta parameter|to_empty\(\)|with meta tensors",
     ("meta-weights-moved", "meta-weights-run")),
    ("conv", r"input type \(|and (?:weight|bias) type \(", ("conv-devices", "dtype-mismatch")),
    ("device", r"same device|different from other tensors|is on cpu|\bexpected device|not on the expected device"
               r"|to have the same device|device mismatch|devices? (?:do not|don't) match",
     ("inputs-on-cpu", "model-on-cpu", "block-left-behind", "labels-on-cpu")),
    ("no-cuda", r"not compiled with cuda|not linked with support for cuda|no nvidia driver"
                r"|cannot access accelerator device|no cuda gpus are available",
     ("cuda-mixed-to", "no-cuda")),
    ("pin", r"pin_memory=True|'pin_memory' argument|pinned memory (?:requires|won't)", ("pin-memory-no-gpu",)),
    ("autocast", r"disabling autocast", ("autocast-outside",)),
    ("dtype", r"same dtype|expected scalar type|scalar type .{0,40}but (?:found|got)|dtype mismatch|mixed dtype"
              r"|to have the same dtype|must have the same dtype",
     ("dtype-mismatch", "autocast-outside")),
]
_KINDS = [(name, re.compile(pattern, re.I), ids) for name, pattern, ids in KINDS]
# A cheap first pass over ~100k library strings: every KINDS pattern needs one of these words.
_WORDS = ("device", "dtype", "scalar type", "meta", "numpy", "state_dict", "deserialize", "map_location", "offload",
          "accelerate", "bit model", "input type", "weight type", "bias type", "cuda", "accelerator", "pin",
          "autocast", "is on cpu", "different from other tensors")
_ANY_WORD = re.compile("|".join(map(re.escape, _WORDS)))  # one scan of a string, not one per word
# Not messages: assertions meant for PyTorch's developers, build paths, operator schemas ("arange(Scalar end, ...) -> Tensor").
_SKIP = re.compile(r"INTERNAL ASSERT|please report a bug|/__w/|\) -> |^\w[\w.]*\([^)]*\b(?:Tensor|Scalar|int)\b|^\W*$", re.I)
SHORT_WORDS = 8  # a pasted message cut after this many words of an entry's longest part still matches


@dataclass(frozen=True)
class Entry:
    """One message of the catalog."""

    text: str  # the template, `{}` where a value goes (a C++ string literal has its values around it)
    source: str  # "libtorch_cpu.so", "transformers/generation/utils.py:2975", ...
    kind: str
    mistakes: tuple[str, ...]  # best first
    anchor: str  # the longest literal part, normalised: what a pasted text must contain
    short: str  # its first SHORT_WORDS words: enough for a shortened paste

    def filled(self, value: str) -> str:
        """The message with every placeholder (and, for a C++ literal, both ends) filled with `value`."""
        text = self.text.replace(PLACEHOLDER, value)
        return f"{value}{text}{value}" if self.source.endswith(".so") else text


def normalise(text: str) -> str:
    """Lower case, every run of whitespace one space: line wraps and case no longer matter."""
    return " ".join(text.split()).lower()


def _distinctive(part: str) -> bool:
    words = re.findall(r"[A-Za-z_]+", part)
    return len(words) >= 3 and sum(len(w) for w in words) >= 15


def _entry(template: Template) -> Entry | None:
    text = template.text.strip()
    low = text.lower()
    if len(text) > 600 or not _ANY_WORD.search(low) or _SKIP.search(text):
        return None
    kind = next(((name, ids) for name, pattern, ids in _KINDS if pattern.search(text)), None)
    parts = [p for p in (normalise(p).strip(" ,.:;!(") for p in text.split(PLACEHOLDER)) if _distinctive(p)]
    if kind is None or not parts:
        return None
    anchor = max(parts, key=len)
    short = " ".join(anchor.split()[:SHORT_WORDS])
    return Entry(text, template.source, kind[0], kind[1], anchor, short)


def _templates() -> list[Template]:
    out = [Template(s, lib) for lib in LIBRARIES if (TORCH_LIB / lib).is_file()
           for s in rodata_strings(TORCH_LIB / lib)]
    for package, files in SOURCES.items():
        root = Path(package.__file__).parent
        for rel in files:
            if (root / rel).is_file():
                out.extend(python_templates(root / rel, root.parent))
    return out


@functools.cache
def catalog() -> tuple[Entry, ...]:
    """Every selected message of the installed libraries, each once, in the order they were read."""
    seen: set[str] = set()
    entries = []
    for template in _templates():
        entry = _entry(template)
        if entry is not None and entry.text not in seen:
            seen.add(entry.text)
            entries.append(entry)
    return tuple(entries)


def find(normalised: str) -> list[tuple[Entry, int]]:
    """The entries a (normalised) text contains, each with where it matched; longest anchors first."""
    found = []
    for entry in catalog():
        at = normalised.find(entry.anchor)
        if at < 0:
            at = normalised.find(entry.short)
        if at >= 0:
            found.append((entry, at))
    return sorted(found, key=lambda ea: -len(ea[0].anchor))
