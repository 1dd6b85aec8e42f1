"""The package's shape, read from its source (nothing is imported): imports point down the layers.

    core <- hw <- load <- {run, lab} <- {web, tools} <- entry points (app.py, python -m ...)

Checked, each failure naming the file and the line: no import against the layer order
(siblings do not import each other), no import cycle (imports inside functions count),
at most a handful of playground imports inside functions and each with its reason in a
comment, no module over 450 lines, no use of another module's private name. The second
half of this file shows that each check fails on a small package built to break it.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "playground"
LAYERS = {"core": 0, "hw": 1, "load": 2, "run": 3, "lab": 3, "web": 4, "tools": 4}
ENTRY = 5  # playground/__init__, __main__ and the `python -m playground.<tool>` entry points
MAX_LINES = 450
MAX_FUNCTION_IMPORTS = 5


@dataclass(frozen=True)
class Edge:
    src: str  # importing module, dotted
    dst: str  # imported module, dotted
    file: str
    line: int
    in_function: bool
    commented: bool  # a comment on the line or just above it says why


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer(module: str, top: str) -> int:
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != top:
        return ENTRY
    return LAYERS.get(parts[1], ENTRY) if len(parts) > 2 or parts[1] in LAYERS else ENTRY


def group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _function_ranges(tree: ast.AST) -> list[tuple[int, int]]:
    return [(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def edges(root: Path) -> tuple[list[Edge], dict[str, Path]]:
    """Every import of a module of the package `root`, with where it is."""
    top = root.name
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    out = []
    for mod, path in files.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        funcs = _function_ranges(tree)
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == top]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == top:
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    targets.append(full if full in files else node.module)
            for dst in targets:
                near = lines[max(0, node.lineno - 4):node.lineno]
                out.append(Edge(mod, dst, str(path.relative_to(root.parent)), node.lineno,
                                any(a <= node.lineno <= b for a, b in funcs), any("#" in ln for ln in near)))
    return out, files


def layer_violations(root: Path) -> list[str]:
    top = root.name
    found = []
    for e, _ in ((e, None) for e in edges(root)[0]):
        a, b = layer(e.src, top), layer(e.dst, top)
        if a == ENTRY:
            continue
        same = group(e.src) == group(e.dst)
        if b > a or (b == a and not same):
            found.append(f"{e.file}:{e.line}: {e.src} ({group(e.src)}) imports {e.dst} ({group(e.dst)}): "
                         "imports point down the layers, and siblings do not import each other")
    return found


def cycles(root: Path) -> list[str]:
    """Strongly connected components of more than one module (Tarjan), with one edge of each named."""
    es, files = edges(root)
    graph: dict[str, set[str]] = {m: set() for m in files}
    where: dict[tuple[str, str], Edge] = {}
    for e in es:
        if e.src != e.dst:
            graph[e.src].add(e.dst)
            where.setdefault((e.src, e.dst), e)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[str] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                inside = [where[(a, b)] for a in comp for b in graph[a] if b in comp]
                out.append("import cycle: " + " -> ".join(sorted(comp)) + "; e.g. "
                           + "; ".join(f"{e.file}:{e.line}" for e in inside[:3]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def function_imports(root: Path) -> list[Edge]:
    return [e for e in edges(root)[0] if e.in_function]


def oversized(root: Path) -> list[str]:
    return [f"{p.relative_to(root.parent)}: {n} lines (at most {MAX_LINES})" for p in sorted(root.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def private_uses(root: Path) -> list[str]:
    """`from playground.x import _name`, or `alias._name` where alias is a playground module."""
    top = root.name
    _, files = edges(root)
    found = []
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == top:
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{path.relative_to(root.parent)}:{node.lineno}: imports {node.module}.{a.name}")
                    if f"{node.module}.{a.name}" in files:
                        aliases.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == top and a.asname:
                        aliases.add(a.asname)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: uses {node.value.id}.{node.attr}")
    return found


# ---------------------------------------------------------------- the package as it is

def test_imports_point_down_the_layers():
    assert layer_violations(PACKAGE) == []


def test_no_import_cycle_counting_imports_inside_functions():
    assert cycles(PACKAGE) == []


def test_few_imports_inside_functions_each_with_its_reason():
    inside = function_imports(PACKAGE)
    assert len(inside) <= MAX_FUNCTION_IMPORTS, [f"{e.file}:{e.line}" for e in inside]
    assert [f"{e.file}:{e.line}" for e in inside if not e.commented] == []


def test_no_module_over_450_lines():
    assert oversized(PACKAGE) == []


def test_no_module_uses_another_modules_private_names():
    assert private_uses(PACKAGE) == []


def test_every_layer_module_has_a_docstring():
    missing = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py")
               if p.stat().st_size and ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) is None]
    assert missing == []


# ---------------------------------------------------------------- each check can fail

@pytest.fixture
def broken(tmp_path):
    """A small package with one of each mistake: an upward import, a cycle through a function-level
    import, a private name used across modules, a module over the size limit."""
    pkg = tmp_path / "playground"

    def write(rel: str, text: str) -> None:
        f = pkg / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text), encoding="utf-8")

    for sub in ("", "core", "hw", "load", "run", "lab", "web", "tools"):
        write(f"{sub}/__init__.py" if sub else "__init__.py", '"""x"""\n')
    write("core/errors.py", '"""x"""\nfrom playground.hw import devices  # upward\n')
    write("hw/devices.py", '"""x"""\ndef f():\n    from playground.core import errors\n')
    write("run/slot.py", '"""x"""\nfrom playground.lab import harness\nfrom playground.load.loader import _secret\n')
    write("lab/harness.py", '"""x"""\n')
    write("load/loader.py", '"""x"""\n' + "x = 1\n" * 460)
    return pkg


def test_the_checks_catch_what_they_are_for(broken):
    assert any("playground/core/errors.py:2" in v and "imports playground.hw.devices" in v
               for v in layer_violations(broken))
    assert any("playground/run/slot.py:2" in v for v in layer_violations(broken))  # run -> lab: siblings
    assert any("playground.core.errors -> playground.hw.devices" in c for c in cycles(broken))
    assert [f"{e.file}:{e.line}" for e in function_imports(broken) if not e.commented] == ["playground/hw/devices.py:3"]
    assert any("load/loader.py: 461 lines" in o for o in oversized(broken))
    assert any("run/slot.py:3: imports playground.load.loader._secret" in p for p in private_uses(broken))
