"""What a real GPU prints, built from the installed PyTorch's own message templates.

A simulated device mismatch (fake `cuda:0`) is worded as TensorIterator words it; a real CUDA
kernel often fails earlier, in its generated wrapper's device check, and words it differently.
`same_device(op, arg, arg_device, common_device)` builds that sentence from the string literals
of `libtorch_cpu.so` and this torch's `native_functions.yaml`; None when they cannot be found.
See docs/lab.md.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import torch
from torch._subclasses import fake_tensor

from playground.core.i18n import Said, said
from playground.lab.library_text import PLACEHOLDER, TORCH_LIB, call_templates, contains, rodata_strings

LIB = TORCH_LIB / "libtorch_cpu.so"
FAKE_TENSOR = Path(fake_tensor.__file__)  # where FakeTensor words an operator meeting two devices
YAML = Path(torch.__file__).parent.parent / "torchgen" / "packaged" / "ATen" / "native" / "native_functions.yaml"
# How the two messages are found in the library (then taken whole, with their neighbours): search keys, not text.
WRAPPER_CHECK = "same device, but got"
ITERATOR_CHECK = "same device, but found at least two devices"


@functools.cache
def _fragments() -> dict[str, tuple[str, ...]]:
    """The literal pieces of the two device-check messages, as the library stores them."""
    strings = rodata_strings(LIB)
    out: dict[str, tuple[str, ...]] = {}
    for i, s in enumerate(strings):
        if WRAPPER_CHECK in s and s.endswith(" ") and i + 2 < len(strings):
            nxt = strings[i + 1: i + 3]  # ", different from other tensors on ", " (when checking argument in method "
            if nxt[0].startswith(", ") and nxt[1].startswith(" (") and "method" in nxt[1]:
                out["wrapper"] = (s, *nxt)
        elif ITERATOR_CHECK in s and s.endswith(", "):
            out["iterator"] = (s,)
    for joiner in (" is on ", " and ", "!", ")"):
        if not contains(LIB, joiner):
            return {}
    return out


@functools.cache
def fake_template() -> str | None:
    """The message FakeTensor raises where an operator meets tensors on two devices, as the installed torch's
    source words it ("{}" for each value, the two devices last), or None. It changed between versions: torch 2.13
    raises FakeTensorDeviceMismatchError, "...but found at least two devices, {} and {}!"; torch 2.11 has no such
    class and raises a plain RuntimeError, "Unhandled FakeTensor Device Propagation for {}, found two different
    devices {}, {}"."""
    try:
        texts = call_templates(FAKE_TENSOR)
    except (OSError, SyntaxError, ValueError):
        return None
    return next((t for t in texts if " two " in t and "device" in t and t.count(PLACEHOLDER) >= 2), None)


def mismatch_patterns(a: str, b: str) -> list[str]:
    r"""Regular expressions for a device mismatch between devices `a` and `b` (patterns themselves, e.g.
    r"cuda:\d+"), either order, in each wording the installed torch has: FakeTensor's (its Python source), and a
    real kernel's two (TensorIterator's and a generated wrapper's, libtorch_cpu.so's literals); those it cannot
    read are left out."""
    either = lambda mid: rf"(?:(?:{a}){mid}(?:{b})|(?:{b}){mid}(?:{a}))"  # noqa: E731
    out = []
    fake = fake_template()
    if fake:
        parts = fake.split(PLACEHOLDER)
        head = re.escape(parts[0]) + "".join(".+?" + re.escape(p) for p in parts[1:-2])
        out.append(head + either(re.escape(parts[-2])) + re.escape(parts[-1]))
    try:
        parts_lib = _fragments()
    except (OSError, ValueError):  # no ELF libtorch_cpu.so here (another platform): its wordings unread
        parts_lib = {}
    if "iterator" in parts_lib:
        out.append(re.escape(parts_lib["iterator"][0]) + either(" and ") + "!")
    if "wrapper" in parts_lib:
        x, y, _ = parts_lib["wrapper"]
        out.append(re.escape(x) + rf"\w+ is on (?:{a}|{b})" + re.escape(y) + rf"(?:{a}|{b})")
    return out


@functools.cache
def _yaml_entry(op: str) -> str:
    """The native_functions.yaml entry of `op` (its functional overload), or ''."""
    if not YAML.is_file():
        return ""
    text = YAML.read_text(encoding="utf-8")
    m = re.search(r"^- func: " + re.escape(op) + r"\(.*?(?=^- func: |\Z)", text, re.M | re.S)
    return m.group(0) if m else ""


def wrapper_name(op: str, key: str = "CUDA") -> str | None:
    """torchgen's name for the `key` kernel wrapper of `op` ("name" or "name.overload"), or None when
    that kernel runs no device check (TensorIterator operators) or there is no such kernel."""
    name, _, overload = op.partition(".")
    entry = _yaml_entry(op)
    if not entry or re.search(r"^\s*device_check: NoCheck", entry, re.M):
        return None
    if re.search(r"^\s*(structured_delegate:|structured: True)", entry, re.M):
        return f"wrapper_{key}_{name}"
    if not re.search(r"^\s+[\w, ]*\b" + key + r"\b[\w, ]*:", entry, re.M):
        return None  # no kernel of its own on this backend (a composite: the check happens in what it calls)
    return f"wrapper_{key}_{overload}_{name}"


def same_device(op: str, arg: str, arg_device: str, common_device: str) -> tuple[str, Said] | None:
    """The device mismatch as a real GPU words it with this torch, and how it was built; None if unknown.

    `op` is the ATen operator whose kernel meets the mismatch (`index_select`, `nll_loss_forward`, `mul`),
    `arg` the argument its check names, `arg_device` where that argument is, `common_device` where the
    tensors before it are.
    """
    parts = _fragments()
    name, _, overload = op.partition(".")
    schema = getattr(getattr(torch.ops.aten, name, None), overload or "default", None)
    if not parts or schema is None or arg not in [a.name for a in schema._schema.arguments]:
        return None
    wrapper = wrapper_name(op)
    if wrapper is None:  # a TensorIterator operator: its own wording, the first device and then the other
        if "iterator" not in parts or not re.search(r"device_check: NoCheck", _yaml_entry(op)):
            return None
        text = f"{parts['iterator'][0]}{common_device} and {arg_device}!"
        return text, said("gpu.iterator", op=op, lib=LIB.name)
    if "wrapper" not in parts:
        return None
    a, b, c = parts["wrapper"]
    text = f"{a}{arg} is on {arg_device}{b}{common_device}{c}{wrapper})"
    return text, said("gpu.wrapper", op=op, arg=arg, wrapper=wrapper, lib=LIB.name)


@functools.cache
def _conv_fragments() -> tuple[str, str, str] | None:
    """The three literals of the convolution's type-check message, found by their distinctive words."""
    strings = rodata_strings(LIB)
    try:
        head = next(s for s in strings if s.startswith("Input type") and s.endswith("("))
        middle = next(s for s in strings if s.startswith(")") and "weight type" in s and s.endswith("("))
        tail = next(s for s in strings if s.startswith(")") and "MKLDNN" in s and "weight is a dense" in s)
    except StopIteration:
        return None
    return head, middle, tail


def conv_types(input_type: str, weight_type: str) -> tuple[str, Said] | None:
    """A convolution's type check as a real GPU words it ("Input type (torch.FloatTensor) and weight type
    (torch.cuda.FloatTensor) should be the same or input should be a MKLDNN tensor ...")."""
    parts = _conv_fragments()
    if parts is None:
        return None
    head, middle, tail = parts
    return f"{head}{input_type}{middle}{weight_type}{tail}", said("gpu.conv", lib=LIB.name)


def refill(message: str, old_device: str, new_device: str, fragment: str, lib: Path) -> tuple[str, Said] | None:
    """A live message raised on a stand-in device (meta), with the device a GPU has in its place.

    Only where the message is the library's template (its literal `fragment` is in `lib` and in the
    message) and the device stands right before that fragment."""
    if not contains(lib, fragment) or f"{old_device}{fragment}" not in message:
        return None
    return (message.replace(f"{old_device}{fragment}", f"{new_device}{fragment}", 1),
            said("gpu.refill", old=old_device, new=new_device, lib=lib.name))
