"""The installed libraries' own words: message templates read out of PyTorch's shared libraries and
out of the Python sources of PyTorch, Transformers and Accelerate.

C++ messages (`TORCH_CHECK(cond, "<words> ", arg, " <more words> ", device, ...)`)
are compiled into read-only data as separate string literals, one per piece of text between two
values; `rodata_strings(lib)` returns those strings in the order the library stores them (the
pieces of one message usually sit together). Python messages are f-strings, `+` chains, `%` or
`.format` templates in `raise`, `warnings.warn` and `logger.warning` calls; `python_templates(file)`
returns each with its values replaced by `{}`.

Nothing here is a message the playground wrote: every text comes from the installed files, read
when first needed. Callers cache what they keep (the whole read-only data of libtorch_cpu.so is
18 MB; nothing keeps it).
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import torch

TORCH_LIB = Path(torch.__file__).parent / "lib"
PLACEHOLDER = "{}"
_PRINTABLE = re.compile(rb"[\x20-\x7e\t\n]{4,}")


def rodata(lib: Path) -> bytes:
    """The `.rodata` section of an ELF shared library (64-bit, little-endian), where its string literals live."""
    with open(lib, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            raise ValueError(f"{lib.name} is not a 64-bit little-endian ELF file")
        shoff, = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQ", table, i * shentsize) for i in range(shnum)]
        names_at, names_size = sections[shstrndx][4], sections[shstrndx][5]
        f.seek(names_at)
        names = f.read(names_size)
        for name, _type, _flags, _addr, offset, size in sections:
            if names[name:names.index(b"\0", name)] == b".rodata":
                f.seek(offset)
                return f.read(size)
    raise ValueError(f"{lib.name} has no .rodata section")


def rodata_strings(lib: Path) -> list[str]:
    """The printable NUL-terminated strings (4 characters or more) of a library's `.rodata`, in order."""
    data = rodata(lib)
    return [m.group().decode("ascii") for m in _PRINTABLE.finditer(data)
            if m.end() < len(data) and data[m.end()] == 0]


@functools.lru_cache(maxsize=64)
def contains(lib: Path, text: str) -> bool:
    """Whether `text` occurs anywhere in the library's read-only data (as a string or inside one); the
    answers are kept, not the data."""
    return text.encode() in rodata(lib)


@dataclass(frozen=True)
class Template:
    """A message as its source has it: literal text with `{}` where a value goes."""

    text: str
    source: str  # "libtorch_cpu.so" or "transformers/generation/utils.py:2976"

    def parts(self) -> list[str]:
        return self.text.split(PLACEHOLDER)


# ------------------------------------------------------------------ Python sources

_CALLS = ("warn", "warning", "warning_once", "warning_advice", "error")


def _literal(node: ast.AST) -> str | None:
    """The template of a string expression: literal parts kept, every value a `{}`; None if not a string."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else PLACEHOLDER for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else PLACEHOLDER) + (right if right is not None else PLACEHOLDER)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _literal(node.left)
        return re.sub(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfi]", PLACEHOLDER, left) if left is not None else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"):
        base = _literal(node.func.value)
        return re.sub(r"\{[^{}]*\}", PLACEHOLDER, base) if base is not None else None
    return None


def _message_node(node: ast.AST) -> ast.AST | None:
    """The message argument of `raise X("...")`, `warnings.warn("...")`, `logger.warning("...")`, and of
    `error_msgs.append("...")` / `.insert(0, "...")` (how `load_state_dict` gathers its errors)."""
    call = node.exc if isinstance(node, ast.Raise) else node
    if not isinstance(call, ast.Call) or not call.args:
        return None
    if isinstance(node, ast.Raise):
        return call.args[0]
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name in ("append", "insert") and isinstance(call.func, ast.Attribute):
        owner = getattr(call.func.value, "id", "") or getattr(call.func.value, "attr", "")
        if "msg" in owner or "error" in owner:
            return call.args[-1]
    return call.args[0] if name in _CALLS else None


def python_templates(path: Path, package_root: Path) -> list[Template]:
    """Every message template raised, warned or logged in one Python source file."""
    nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))  # walked twice: listed once
    rel = path.relative_to(package_root).as_posix()
    # `msg = "..."; raise X(msg)`: a message kept in a variable first (resolved by name, within the file)
    named = {t.id: n.value for n in nodes if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name) and _literal(n.value) is not None}
    out = []
    for node in nodes:
        if isinstance(node, (ast.Raise, ast.Call)):
            arg = _message_node(node)
            if isinstance(arg, ast.Name):
                arg = named.get(arg.id)
            text = _literal(arg) if arg is not None else None
            if text and text.strip(PLACEHOLDER + " "):
                out.append(Template(text, f"{rel}:{node.lineno}"))
    return out


def call_templates(path: Path) -> list[str]:
    """Every string template passed as a call's first argument in one Python source file (`raise X("...")`, and
    also `super().__init__("...")`, where an exception class words its own message), in the order `ast.walk`
    meets them."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args:
            text = _literal(node.args[0])
            if text and text.strip(PLACEHOLDER + " "):
                out.append(text)
    return out


def source_line(fn, needle: str) -> str:
    """The line of the installed source of `fn` that contains `needle`, as "path:line: code" ('' if none)."""
    fn = inspect.unwrap(fn)  # through decorators (generate() is wrapped by torch.no_grad)
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if needle in line:
            path = inspect.getsourcefile(fn).split("site-packages/")[-1]
            return f"{path}:{first + i}: {line.strip()}"
    return ""


def generate_device_lines() -> dict[str, str]:
    """The installed Transformers' own lines that decide what generate() does with inputs on another device than
    the model: where it warns (`warns_when`) and where it moves the forward pass's inputs (`moves_inputs`; ''
    where this version has no such line). Generation's utilities are imported here, when first asked: they
    pull in torch._dynamo (a second and a half of a server's start)."""
    from transformers.generation import utils as generation  # deferred (start-up): pulls in torch._dynamo

    return {"warns_when": source_line(generation.GenerationMixin.generate, "!= input_ids.device.type"),
            "moves_inputs": source_line(generation.GenerationMixin.prepare_inputs_for_generation,
                                        "move_to_device(model_inputs")}
