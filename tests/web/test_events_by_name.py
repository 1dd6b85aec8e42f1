"""The page's events answer by name: no event handler returns or yields a positional tuple (or list) of more than
five values, read from the source (nothing is imported).

Gradio pairs a tuple's values with an event's outputs by position, so a handler that answers seventeen outputs
by position must be kept in step, comma by comma, with the outputs listed where it is wired. A handler answers
by name instead (`playground.web.page.answers`): a dict from output names to values.

The handlers are found where they are wired: the function (or lambda) an event listener (`.click`, `.change`,
`.then`, ...), `gr.api` or a language hook (`page.on_language`, `page.after_language`) is given, anywhere under
playground/web. A value is counted as Gradio will see it: `*[skip] * 13` is 13 values, `*ui_ledger(...)` as many
as `ui_ledger` returns, `*hidden` as many as the tuple `hidden` was bound to, `tuple(x for _ in range(14))` 14.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tests.package_source import read

WEB = Path(__file__).resolve().parents[2] / "playground" / "web"
MOST = 5
LISTENERS = {"click", "change", "input", "submit", "select", "then", "success", "tick", "load", "unload", "blur",
             "focus", "release", "upload", "on_language", "after_language", "api"}
Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def own_nodes(fn: Function):
    """The nodes of `fn`'s body, not those of a function or lambda defined inside it."""
    todo = [fn.body] if isinstance(fn, ast.Lambda) else list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def name_of(node: ast.AST) -> str | None:
    """`ui_load`, `h.ui_load` -> "ui_load"; a handler passed through a wrapper (`answering(ui_load, ...)`): its
    first argument's name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and node.args:
        return name_of(node.args[0])
    return None


class Reader:
    def __init__(self, sources: dict[str, str]):
        self.trees = {f: ast.parse(text, filename=f) for f, text in sources.items()}
        self.defs: dict[str, list[tuple[str, Function]]] = {}
        for f, tree in self.trees.items():
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.defs.setdefault(node.name, []).append((f, node))
        self._widths: dict[str, int] = {}

    def handlers(self) -> list[tuple[str, str, Function]]:
        """(file, name, function) of every handler given to a listener, a hook or gr.api."""
        found: dict[tuple[str, int], tuple[str, str, Function]] = {}
        for f, tree in self.trees.items():
            for call in ast.walk(tree):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr in LISTENERS):
                    continue
                # fn given by position, by keyword, or in a `**answering(fn, ...)` splat
                given = call.args[0] if call.args else next(
                    (k.value for k in call.keywords
                     if k.arg == "fn" or (k.arg is None and isinstance(k.value, ast.Call))), None)
                if isinstance(given, ast.Lambda):
                    found[(f, given.lineno)] = (f, "lambda", given)
                    continue
                for file, fn in self.defs.get(name_of(given) or "", []):
                    found[(file, fn.lineno)] = (file, fn.name, fn)
        return sorted(found.values(), key=lambda x: (x[0], x[2].lineno))

    def width(self, node: ast.AST, fn: Function) -> int | None:
        """How many values Gradio sees in `node` when it is a tuple or a list; None when it is neither."""
        if isinstance(node, (ast.Tuple, ast.List)):
            return sum(self.starred(e.value, fn) if isinstance(e, ast.Starred) else 1 for e in node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            left, right = (node.left, node.right) if isinstance(node.right, ast.Constant) else (node.right, node.left)
            inner = self.width(left, fn)
            if inner is not None and isinstance(right, ast.Constant) and isinstance(right.value, int):
                return inner * right.value
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tuple", "list")
                and node.args and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))):
            gen = node.args[0].generators[0].iter
            if (isinstance(gen, ast.Call) and isinstance(gen.func, ast.Name) and gen.func.id == "range"
                    and len(gen.args) == 1 and isinstance(gen.args[0], ast.Constant)):
                return gen.args[0].value
        if isinstance(node, ast.Name):
            bound = self.bound(node.id, fn)
            return None if bound is None else self.width(bound, fn)
        return None

    def starred(self, node: ast.AST, fn: Function) -> int:
        """What `*node` spreads: a literal, a name bound to one, or a call to a function of playground/web."""
        w = self.width(node, fn)
        if w is not None:
            return w
        if isinstance(node, ast.Call):
            return self.returns(name_of(node.func) or "") or 1
        if isinstance(node, ast.Name) and (bound := self.bound(node.id, fn)) is not None:
            return self.starred(bound, fn)
        return 1

    def bound(self, name: str, fn: Function) -> ast.AST | None:
        """The value `name` is bound to in `fn` by a plain assignment (the last one read), if any."""
        value = None
        for node in own_nodes(fn):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == name):
                value = node.value
        return value

    def returns(self, name: str) -> int:
        """The most values a function of this name returns or yields as a tuple or a list (0: never one)."""
        if name not in self._widths:
            self._widths[name] = 0  # a recursive call counts as nothing while it is being read
            self._widths[name] = max((w for _, fn in self.defs.get(name, []) for _, w in self.results(fn)),
                                     default=0)
        return self._widths[name]

    def results(self, fn: Function) -> list[tuple[int, int]]:
        """(line, width) of every tuple or list `fn` returns or yields."""
        values = [fn.body] if isinstance(fn, ast.Lambda) else [
            n.value for n in own_nodes(fn) if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None]
        return sorted((v.lineno, w) for v in values if (w := self.width(v, fn)) is not None)


def positional(sources: dict[str, str]) -> list[str]:
    """Every place a handler answers more than MOST outputs by position: "file:line name: N values"."""
    reader = Reader(sources)
    return [f"{file}:{line} {name}: {w} values by position" for file, name, fn in reader.handlers()
            for line, w in reader.results(fn) if w > MOST]


def test_no_event_handler_answers_more_than_five_outputs_by_position():
    found = positional(read(WEB))
    assert not found, (f"{len(found)} answers by position (return a dict by name: playground.web.page.answers):\n"
                       + "\n".join(found))


# ---------------------------------------------------------------- the reader, fed lines written to break it

def _one(**files: str) -> list[str]:
    return positional({f"web/{k}.py": textwrap.dedent(v) for k, v in files.items()})


def test_the_reader_counts_what_gradio_sees():
    found = _one(tab="""
        def build(b, h):
            b.click(h.ui_go, [], [])
            b.change(lambda: ("", "", "", "", "", ""), [], [])
        """, handlers="""
        import gradio as gr
        def pair():
            return 1, 2
        def ui_go(x):
            skip = gr.skip()
            hidden = (1, 2, 3)
            two = pair()
            if x:
                return (*[skip] * 3, 1, 2)                   # 5: fine
            if x > 1:
                yield (*hidden, *two, 1)                     # 6
            return tuple(skip for _ in range(9))             # 9
        def unwired():
            return (1, 2, 3, 4, 5, 6, 7)                     # not a handler: not read
        """)
    assert found == ["web/handlers.py:12 ui_go: 6 values by position", "web/handlers.py:13 ui_go: 9 values by position",
                     "web/tab.py:4 lambda: 6 values by position"]


def test_a_handler_wired_through_a_wrapper_or_a_hook_is_read_too():
    found = _one(tab="""
        def build(page, b, ui):
            b.click(**answering(ui_a, ui), inputs=[])
            page.on_language(ui_b, [], [])
        def ui_a():
            return [1, 2, 3, 4, 5, 6]
        def ui_b(lang):
            return [*[None] * 2, *[None] * 4]
        """)
    assert found == ["web/tab.py:6 ui_a: 6 values by position", "web/tab.py:8 ui_b: 6 values by position"]


def test_the_playgrounds_events_by_name_live_beside_its_layout():
    """Adding an output to the Playground touches tabs/play.py alone (its docstring says how): every handler it
    wires by name (`answering(fn, ui)`) is defined there, beside the components, Load's and Generate's among them."""
    tree = ast.parse((WEB / "tabs" / "play.py").read_text(encoding="utf-8"))
    here = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    wired = [c.args[0] for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
             and c.func.id == "answering" and c.args]
    names = {name_of(w) for w in wired}
    elsewhere = [ast.unparse(w) for w in wired if not (isinstance(w, ast.Name) and w.id in here)]
    assert not elsewhere, f"wired by name from another module: {elsewhere}"
    assert {"ui_load", "ui_generate"} <= names, sorted(names)
