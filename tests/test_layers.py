"""The package's shape, read from its source (nothing is imported): imports point down the layers.

    core <- hw <- load <- {run, lab} <- {web, tools} <- entry points (playground/__main__.py, bench.py, ...)

Checked, each failure naming the file and the line: every subpackage and top-level module belongs to a
layer; no import against the layer order (siblings do not import each other), written any way Python
can import (`import a.b`, `from a import b`, relative `from ..web import views`,
`importlib.import_module`, `__import__`); no import the test cannot read; no import cycle (imports inside
functions count); every import inside a function says why it is deferred, on its line or just above it;
at most a handful of the package's own modules imported inside functions; no module over 450 lines; no use
of another module's private name, however it is reached. The second half feeds each check a few lines
written to break it. The module-level mutable state is listed in tests/test_globals.py.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

from tests.package_source import (Import, Module, bound_names, imports, is_private, owning_module, parse,
                                  resolve, root_name, the_package)

PACKAGE = Path(__file__).resolve().parent.parent / "playground"
TOP = PACKAGE.name
LAYERS = {"core": 0, "hw": 1, "load": 2, "run": 3, "lab": 3, "web": 4, "tools": 4}
ENTRY = 5
# The top-level modules besides the package's __init__: the `python -m playground[.<name>]` entry points,
# each handing over to playground.tools at once. The library never imports them.
ENTRY_MODULES = {"__main__", "bench", "soak", "space", "train_bundled"}
MAX_LINES = 450
MAX_PACKAGE_IMPORTS_IN_FUNCTIONS = 6  # one per command of the CLI (4) and per kind of gpu-run step (2)

# Why an import may wait until its function runs. Written on the import's line or just above it as
# `# deferred (<kind>): <what and why, in a sentence>`; anything else is an import that belongs at the top.
DEFERRED_KINDS = {
    "start-up": "the module is imported where the library is not needed yet (a command's --help, a usage "
                "error), and the library takes long to import",
    "optional": "the package may be absent, or must not be imported unless it is used",
    "environment": "the library reads environment variables once, when first imported, and this process "
                   "sets them before that",
    "cycle": "importing at the top would close an import cycle",
}
DEFERRED = re.compile(r"#\s*deferred \((" + "|".join(map(re.escape, DEFERRED_KINDS)) + r")\): \S.{15,}", re.I)


def layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != TOP:
        return None
    if len(parts) == 1:
        return ENTRY
    if parts[1] in LAYERS:
        return LAYERS[parts[1]]
    return ENTRY if len(parts) == 2 and parts[1] in ENTRY_MODULES else None


def group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def own(imps: list[Import]) -> list[Import]:
    return [e for e in imps if e.dst.split(".")[0] == TOP]


# ---------------------------------------------------------------- the checks, over source text

def unassigned(mods: dict[str, Module]) -> list[str]:
    """Every subpackage and top-level module no layer names."""
    found: dict[str, str] = {}
    for m in mods.values():
        if layer(m.name) is None:
            parts = m.name.split(".")
            what = f"{TOP}/{parts[1]}/" if len(parts) > 2 or m.is_package else m.file
            found.setdefault(what, m.file)
    return [f"{what} ({file}) belongs to no layer: name it in LAYERS, or in ENTRY_MODULES if it is an entry point"
            for what, file in found.items()]


def layer_violations(mods: dict[str, Module]) -> list[str]:
    found = []
    for e in own(imports(mods)):
        a, b = layer(e.src), layer(e.dst)
        if a is None or a == ENTRY or not e.dst:
            continue  # an unassigned importer is unassigned()'s to report; an unreadable import, unreadable()'s
        how = " (through importlib)" if e.dynamic else ""
        if b is None:
            found.append(f"{e.where}: {e.src} imports {e.dst}{how}, which belongs to no layer")
        elif b > a or (b == a and group(e.src) != group(e.dst)):
            found.append(f"{e.where}: {e.src} ({group(e.src)}) imports {e.dst} ({group(e.dst)}){how}: "
                         "imports point down the layers, and siblings do not import each other")
    return found


def unreadable(mods: dict[str, Module]) -> list[str]:
    """importlib.import_module / __import__ of a name the test cannot read: its layer cannot be checked."""
    return [f"{e.where}: {e.src} imports a module named by an expression: name it in a string"
            for e in imports(mods) if e.dynamic and not e.dst]


def cycles(mods: dict[str, Module]) -> list[str]:
    """Strongly connected components of more than one module (Tarjan), with one edge of each named."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    where: dict[tuple[str, str], Import] = {}
    for e in own(imports(mods)):
        dst = owning_module(e.dst, mods)
        if dst and dst != e.src:
            graph[e.src].add(dst)
            where.setdefault((e.src, dst), e)
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
                           + "; ".join(e.where for e in inside[:3]))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def unexplained_deferrals(mods: dict[str, Module]) -> list[str]:
    """Imports inside functions without `# deferred (<kind>): <why>` on their line or just above."""
    return [f"{e.where}: imports {e.dst or 'a module'} inside a function with no reason: move it to the top, "
            f"or say why it waits on its line or the line above: '# deferred (<{'|'.join(DEFERRED_KINDS)}>): ...'"
            for e in imports(mods) if e.in_function and not DEFERRED.search(e.reason)]


def package_imports_in_functions(mods: dict[str, Module]) -> list[str]:
    return [e.where for e in own(imports(mods)) if e.in_function]


def oversized(mods: dict[str, Module]) -> list[str]:
    return [f"{m.file}: {n} lines (at most {MAX_LINES})" for m in mods.values()
            if (n := len(m.text.splitlines())) > MAX_LINES]


# Where a GPU's API may be called: the hardware layer, and the lab's device target (it builds the fake GPU the
# mistakes run on). The code strings the lab shows learners are strings, not calls: they are not read here.
GPU_API_HOMES = (f"{TOP}/hw/", f"{TOP}/lab/target.py")


def gpu_api_outside_hw(mods: dict[str, Module]) -> list[str]:
    """Every `torch.cuda` and `torch.mps` reached in code (not in a string) outside GPU_API_HOMES."""
    found = []
    for mod in mods.values():
        if mod.file.startswith(GPU_API_HOMES):
            continue
        for node in mod.nodes:
            if (isinstance(node, ast.Attribute) and node.attr in ("cuda", "mps") and isinstance(node.value, ast.Name)
                    and node.value.id == "torch"):
                found.append(f"{mod.file}:{node.lineno}: torch.{node.attr}")
    return found


def private_uses(mods: dict[str, Module]) -> list[str]:
    """Another module's private name, imported (`from top.x import _name`) or reached through any name
    bound to the package (`x._name`, `top.a.x._name` after `import top.a.x`, `L._name` after
    `import top.a.x as L` or `from . import x as L`, `SLOT._lock` after `from top.run.slot import SLOT`)."""
    found = []
    for mod in mods.values():
        for node in mod.nodes:
            if isinstance(node, ast.ImportFrom):
                base = resolve(mod, node.level, node.module)
                if base.split(".")[0] == TOP:
                    found += [f"{mod.file}:{node.lineno}: imports {base}.{a.name}"
                              for a in node.names if is_private(a.name)]
        bound = bound_names(mod, mods, TOP)
        for node in mod.nodes:
            if isinstance(node, ast.Attribute) and is_private(node.attr):
                root = root_name(node.value)
                if root in bound and bound[root] != mod.name:
                    found.append(f"{mod.file}:{node.lineno}: uses {ast.unparse(node)[:80]}, another module's "
                                 "private name")
    return found


# ---------------------------------------------------------------- the package as it is

@pytest.fixture(scope="module")
def tree() -> dict[str, Module]:
    return the_package(PACKAGE)


def test_every_subpackage_and_top_level_module_belongs_to_a_layer(tree):
    assert unassigned(tree) == []


def test_imports_point_down_the_layers(tree):
    assert layer_violations(tree) == []


def test_every_import_names_its_module_in_a_string(tree):
    assert unreadable(tree) == []


def test_no_import_cycle_counting_imports_inside_functions(tree):
    assert cycles(tree) == []


def test_every_import_inside_a_function_says_why_it_waits(tree):
    assert unexplained_deferrals(tree) == []


def test_few_of_the_packages_own_modules_imported_inside_functions(tree):
    assert len(package_imports_in_functions(tree)) <= MAX_PACKAGE_IMPORTS_IN_FUNCTIONS, package_imports_in_functions(tree)


def test_no_module_over_450_lines(tree):
    assert oversized(tree) == []


def test_gpu_apis_are_called_only_in_the_hardware_layer(tree):
    """`torch.cuda` was called in 7 modules outside hw/, though hw/devices.py said it held them all (a Compare row
    reset the current GPU's peak and read its own device's, so a cuda:1 row counted earlier work)."""
    assert gpu_api_outside_hw(tree) == []


def test_no_module_uses_another_modules_private_names(tree):
    assert private_uses(tree) == []


def test_every_layer_module_has_a_docstring(tree):
    assert [m.file for m in tree.values() if m.text.strip() and ast.get_docstring(m.tree) is None] == []


# ---------------------------------------------------------------- each check, fed what it is for

def package(**files: str) -> dict[str, Module]:
    """The layers' empty packages plus `files` ({"load/loader.py": source}), parsed."""
    base = {f"{TOP}/{s}/__init__.py": '"""x"""\n' for s in LAYERS} | {f"{TOP}/__init__.py": '"""x"""\n'}
    return parse(base | {f"{TOP}/{k}": textwrap.dedent(v) for k, v in files.items()})


def test_an_import_up_or_across_the_layers_is_reported():
    mods = package(**{"core/errors.py": "from playground.hw import devices\n", "hw/devices.py": "",
                      "run/slot.py": "import playground.lab.harness\n", "lab/harness.py": "",
                      "load/loader.py": "from playground.run.slot import SLOT\nfrom playground.load import hub\n",
                      "load/hub.py": "", "core/paths.py": "from playground import bench\n", "bench.py": ""})
    assert sorted(v.split(": ")[0] for v in layer_violations(mods)) == [
        "playground/core/errors.py:1", "playground/core/paths.py:1", "playground/load/loader.py:1",
        "playground/run/slot.py:1"]


def test_hole_1_a_relative_upward_import_is_reported():
    mods = package(**{"load/loader.py": "from ..web import views\nfrom . import hub\n", "load/hub.py": "",
                      "web/views.py": "", "run/slot.py": "def f():\n    from ..lab import harness  # deferred (cycle): x y z\n",
                      "lab/harness.py": ""})
    found = layer_violations(mods)
    assert [v.split(": ")[0] for v in found] == ["playground/load/loader.py:1", "playground/run/slot.py:2"]
    assert "imports playground.web.views" in found[0] and "imports playground.lab.harness" in found[1]


def test_hole_2_importlib_and_dunder_import_are_read():
    mods = package(**{"load/loader.py": """\
        import importlib
        from importlib import import_module as im
        V = importlib.import_module("playground.web.views")
        def f():
            __import__("playground.tools.cli")  # deferred (cycle): planted to be found
            return im(".views", package="playground.web"), importlib.import_module(".hub", __package__)
        def g(name):
            return importlib.import_module(name)  # deferred (cycle): planted to be found
        """, "web/views.py": "", "tools/cli.py": "", "load/hub.py": ""})
    found = layer_violations(mods)
    assert [v.split(": ")[0] for v in found] == ["playground/load/loader.py:3", "playground/load/loader.py:5",
                                                  "playground/load/loader.py:6"]
    assert all("through importlib" in v for v in found)
    assert [v.split(": ")[0] for v in unreadable(mods)] == ["playground/load/loader.py:8"]


def test_hole_3_a_subpackage_or_module_no_layer_names_is_reported():
    mods = package(**{"extras/__init__.py": "from playground.web import views\n", "extras/more.py": "",
                      "helper.py": "", "bench.py": "", "web/views.py": "",
                      "core/x.py": "from playground.extras import more\n"})
    assert [v.split(" ")[0] for v in unassigned(mods)] == ["playground/extras/", "playground/helper.py"]
    assert any("imports playground.extras.more, which belongs to no layer" in v for v in layer_violations(mods))


def test_hole_4_a_private_name_reached_any_way_is_reported():
    mods = package(**{"run/slot.py": """\
        import playground.load.loader
        import playground.load.loader as L
        from playground.load import loader
        from playground.load.loader import _secret, Plan
        from ..load import hub as relative
        from playground.load.hub import SLOW
        a = playground.load.loader._quiet, L._x, loader._phase(1), relative._bars, Plan._cache, SLOW._n.y
        b = loader.__doc__
        """, "load/loader.py": "", "load/hub.py": ""})
    found = private_uses(mods)
    assert sorted(v.split(": ", 1)[1].split(",")[0] for v in found) == sorted([
        "imports playground.load.loader._secret", "uses playground.load.loader._quiet", "uses L._x",
        "uses loader._phase", "uses relative._bars", "uses Plan._cache", "uses SLOW._n"])


def test_hole_5_a_deferred_import_needs_its_reason_on_its_line_or_just_above():
    mods = package(**{"load/loader.py": """\
        def nearby_comment_is_not_a_reason():
            # a comment about something else
            x = 1
            import json
        def comment_without_a_reason():
            # json
            import json
        def unknown_kind():
            import json  # deferred (because): it seemed like a good idea
        def own_line():
            import json  # deferred (optional): json may be absent on this planet
        def block_above():
            # deferred (start-up): Transformers takes seconds to import, and --help
            # answers without it.
            from transformers import AutoConfig
            import torch
        def reason_of_the_line_above_is_not_the_next_ones():
            import json  # deferred (optional): json may be absent on this planet
            import csv
        """})
    assert [v.split(": ")[0] for v in unexplained_deferrals(mods)] == [
        "playground/load/loader.py:4", "playground/load/loader.py:7", "playground/load/loader.py:9",
        "playground/load/loader.py:19"]


def test_a_cycle_through_a_function_level_import_is_reported():
    mods = package(**{"core/errors.py": "from playground.hw import devices\n",
                      "hw/devices.py": "def f():\n    from playground.core import errors  # deferred (cycle): x y z w\n"})
    assert any("playground.core.errors -> playground.hw.devices" in c for c in cycles(mods))
    assert package_imports_in_functions(mods) == ["playground/hw/devices.py:2"]


def test_a_gpu_call_outside_the_hardware_layer_is_reported_and_a_string_is_not():
    mods = package(**{"run/compare.py": "import torch\ntorch.cuda.reset_peak_memory_stats()\nx = 'torch.cuda.x'\n",
                      "hw/memory.py": "import torch\ntorch.cuda.reset_peak_memory_stats()\n"})
    assert gpu_api_outside_hw(mods) == ["playground/run/compare.py:2: torch.cuda"]


def test_a_long_module_is_reported():
    assert oversized(package(**{"load/loader.py": "x = 1\n" * 451})) == ["playground/load/loader.py: 451 lines (at most 450)"]
