"""The package read as source text (nothing is imported): its modules, and every import in them resolved.

`read(root)` gives {relative path: text}; every checker in tests/test_layers.py and tests/test_globals.py
takes such a mapping, so a test can hand one a few lines written to break it. `parse` turns it into
`Module`s; `imports` finds every import of a module: `import a.b`, `from a import b`, relative imports
(`from ..web import views`), `importlib.import_module("a.b")` and `__import__("a.b")`, each with its
line, whether it runs inside a function, and the comment that gives its reason (on its own line, or the
block of comment lines just above it).
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

Sources = dict[str, str]  # "playground/load/loader.py" -> its text


def read(root: Path) -> Sources:
    return {str(p.relative_to(root.parent)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


@dataclass
class Module:
    name: str  # dotted: playground.load.loader
    file: str  # playground/load/loader.py
    text: str
    tree: ast.Module
    is_package: bool  # an __init__.py

    @property
    def package(self) -> str:
        """What a relative import starts from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]

    @functools.cached_property
    def nodes(self) -> list[ast.AST]:
        """`ast.walk(tree)` once: the checkers read every node of every module, each several times."""
        return list(ast.walk(self.tree))

    @functools.cached_property
    def function_bodies(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Where each function's and lambda's body lies (start and end, as (line, column)): what runs when it is
        called, not when the module is imported (a function's decorators, defaults and annotations run at import)."""
        return [(_span(f.body[0])[0], _span(f.body[-1])[1]) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                else _span(f.body) for f in self.nodes
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]

    @functools.cached_property
    def import_module_names(self) -> set[str]:
        """Names `importlib.import_module` goes by here (`from importlib import import_module as im`)."""
        if "import_module" not in self.text:  # most modules: no walk of their tree
            return set()
        return {a.asname or a.name for n in self.nodes if isinstance(n, ast.ImportFrom)
                and n.module == "importlib" for a in n.names if a.name == "import_module"}


def parse(sources: Sources) -> dict[str, Module]:
    out = {}
    for file, text in sorted(sources.items()):
        parts = list(Path(file).with_suffix("").parts)
        init = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if init else parts)
        out[name] = Module(name, file, text, ast.parse(text, filename=file), init)
    return out


@functools.cache
def the_package(root: Path) -> dict[str, Module]:
    """The package at `root`, read and parsed once per process (tests/test_layers.py and tests/test_globals.py
    read the same one; the checkers only read it)."""
    return parse(read(root))


@dataclass(frozen=True)
class Import:
    src: str  # the importing module
    dst: str  # the module imported (for `from m import name`, m.name when that is a module, else m)
    file: str
    line: int
    in_function: bool
    reason: str  # the comment on the import's lines, or the comment lines just above it ("" if none)
    dynamic: bool = False  # importlib.import_module / __import__

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def relative(package: str, level: int, name: str | None) -> str:
    """`<level dots><name>` seen from `package`: level 1 is the package itself, 2 its parent, ..."""
    parts = package.split(".")
    parts = parts[:len(parts) - (level - 1)]
    return ".".join([*parts, name] if name else parts)


def resolve(mod: Module, level: int, name: str | None) -> str:
    """The absolute module of `from <level dots><name> import ...` written in `mod`."""
    return relative(mod.package, level, name) if level else name or ""


def comments(text: str) -> dict[int, str]:
    """Line number -> the comment on it (tokenize, so a '#' inside a string is not one)."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string
    return out


def reason_for(node: ast.stmt, lines: list[str], notes: dict[int, str]) -> str:
    """The comment on the statement's own lines, else the block of comment-only lines just above it (or just
    above the run of import lines it ends)."""
    own = [notes[n] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1) if n in notes]
    if own:
        return " ".join(own)
    n = node.lineno - 1
    while n >= 1 and lines[n - 1].strip().startswith(("import ", "from ")):  # one comment above a run of imports
        n -= 1
    block = []
    while n >= 1 and lines[n - 1].strip().startswith("#"):
        block.insert(0, lines[n - 1].strip())
        n -= 1
    return " ".join(block)


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _statement_of(node: ast.AST, mod: Module) -> ast.stmt:
    """The innermost statement holding `node` (itself for a statement): spans nest, so the one starting last."""
    if isinstance(node, ast.stmt):
        return node
    start, end = _span(node)
    holding = [s for s in mod.nodes if isinstance(s, ast.stmt) and _span(s)[0] <= start and end <= _span(s)[1]]
    return max(holding, key=lambda s: (_span(s)[0], [-x for x in _span(s)[1]]))


def dynamic_target(call: ast.Call, mod: Module) -> str | None:
    """For importlib.import_module(...) / __import__(...): the module named, "" when it is not a constant
    the test can read, None when the call is not an import at all."""
    f = call.func
    fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if isinstance(f, ast.Name) and fname in mod.import_module_names:
        fname = "import_module"
    if fname not in ("import_module", "__import__") or not call.args:
        return None
    arg = call.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return ""
    if fname == "import_module" and arg.value.startswith("."):
        anchor = ([k.value for k in call.keywords if k.arg == "package"] + call.args[1:2] or [None])[0]
        if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
            base = anchor.value
        elif isinstance(anchor, ast.Name) and anchor.id == "__package__":
            base = mod.package
        else:
            return ""
        return relative(base, len(arg.value) - len(arg.value.lstrip(".")), arg.value.lstrip(".") or None)
    levels = [k.value for k in call.keywords if k.arg == "level"] + call.args[4:5]
    if levels:
        level = levels[0].value if isinstance(levels[0], ast.Constant) else None
        return resolve(mod, level, arg.value) if isinstance(level, int) else ""
    return arg.value


_READ_ALREADY: list[tuple[dict[str, Module], list[Import]]] = []  # the last few packages' imports: each check asks


def imports(mods: dict[str, Module]) -> list[Import]:
    """Every import in the package, of anything (filter on `dst` for the package's own modules)."""
    for seen, found in _READ_ALREADY:
        if seen is mods:
            return found
    out: list[Import] = []
    for mod in mods.values():
        lines = mod.text.splitlines()
        notes: dict[int, str] | None = None  # tokenized only for a module with a comment on an import's lines
        for node in mod.nodes:
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve(mod, node.level, node.module)
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
                found = subs + ([base] if len(subs) < len(node.names) else [])
            elif isinstance(node, ast.Call) and (target := dynamic_target(node, mod)) is not None:
                found = [target]
            if not found:
                continue
            stmt = _statement_of(node, mod)
            if notes is None and any("#" in lines[n - 1] for n in range(stmt.lineno, stmt.end_lineno + 1)):
                notes = comments(mod.text)
            reason = reason_for(stmt, lines, notes or {})
            start, end = _span(node)
            inside = any(first <= start and end <= last for first, last in mod.function_bodies)
            out += [Import(mod.name, dst, mod.file, node.lineno, inside, reason, isinstance(node, ast.Call))
                    for dst in found]
    _READ_ALREADY[:] = [*_READ_ALREADY[-3:], (mods, out)]
    return out


def owning_module(name: str, mods: dict[str, Module]) -> str | None:
    """The longest prefix of a dotted name that is a module of the package (None if there is none)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in mods:
            return ".".join(parts[:n])
    return None


def bound_names(mod: Module, mods: dict[str, Module], top: str) -> dict[str, str]:
    """Local name -> what of the package it stands for, in `mod`: a module (`import top.a.b as x`,
    `from top.a import b`, `from . import b`, `x = importlib.import_module("top.a")`, and `top` itself
    after `import top.a.b`), or a name another module defines (`from top.a import name`: "top.a:name")."""
    out: dict[str, str] = {}
    for node in mod.nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == top:
                    out[a.asname or top] = a.name if a.asname else top
        elif isinstance(node, ast.ImportFrom):
            base = resolve(mod, node.level, node.module)
            if base.split(".")[0] != top:
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                out[a.asname or a.name] = full if full in mods else f"{base}:{a.name}"
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and (target := dynamic_target(node.value, mod)) and target.split(".")[0] == top):
            out.update({t.id: target for t in node.targets if isinstance(t, ast.Name)})
    return out


def root_name(node: ast.expr) -> str | None:
    """`a` for a.b.c, a[1].b, a.b(...).c; None when the chain does not start at a name."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")
