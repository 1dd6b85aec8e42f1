"""Every module-level mutable global of the package, listed with what it holds and why it is process-wide.

Read from the source (nothing is imported). Module-level state is: a lock or another threading object, a
`threading.local`, an instance of one of the package's classes that is not frozen, a functools cache
(`lru_cache`, `cache`), a name a function rebinds with `global`, a lowercase dict/list/set, any value some
code mutates (`X[k] = v`, `X.append(...)`, `X.attr = v`, `del X[k]`, `X += ...`, in its module or through
`module.X` or `from module import X`), and a value built by a call the test cannot classify. Constants are
not: numbers, strings, tuples, frozensets, compiled regexes, frozen dataclasses, and UPPER_CASE dict/list/set
tables that nothing mutates (mutate one and it is state: this test fails until it is listed).
Not seen: a container mutated under another name (`t = TABLE; t[k] = v`, or passed to a function that
mutates it), and class attributes.
"""

from __future__ import annotations

import ast
import collections

import pytest

from tests.package_source import Module, bound_names, the_package
from tests.test_layers import PACKAGE, TOP, package

# What each holds, and why it is one per process. The models visitors load are run/pool.py's POOL; the rest
# are locks around process-wide effects, caches of what does not change while the process runs, and the
# resident objects those caches keep.
MUTABLE_GLOBALS = {
    "playground.hw.openmp.BOUND": "whether torch's OpenMP threads were bound to cores when torch was first imported, "
                                  "and why: libgomp reads that once per process",
    "playground.hw.cpu_threads.CURRENT": "the torch thread count the server chose at start-up and why: torch's own "
                                         "setting is process-wide, and the devices panel and stats say why it is that",
    # the models visitors load
    "playground.lab.durations.DURATIONS": "how long each mistake took on each model here, the last three runs: "
                                          "the page's estimate of a lab run's time left, from any visitor's runs",
    "playground.run.pool.POOL": "the models loaded for visitors (page, API, CLI), each shared by the sessions that "
                                "hold it, with the one lane every run takes: its figures stay true only if no two "
                                "runs share the machine, and its RAM budget is the process's",
    # the words
    "playground.core.i18n.TABLE": "every word by its key: the area tables, and the words the lab's scenarios, "
                                  "diagnoses and claims register beside their code when imported (register adds a "
                                  "key once, and never changes a word)",
    # resident objects and what they hold
    "playground.lab.harness.bundled": "a second resident model: the bundled model and tokenizer (CPU, float32) that "
                                      "the lab, the fact-check and the diagnoser work on, loaded once per process",
    "playground.run.compiled._CURRENT": "the decode step compiled for one model (held weakly) with its static KV "
                                        "caches: torch.compile's state is process-wide, so one model at a time",
    "playground.hw.zerogpu._CALLS": "how many @spaces.GPU-decorated calls run in this process: ZeroGPU runs each "
                                    "in the worker process that holds the GPU, so the count is that process's",
    "playground.hw.zerogpu._CALLS_LOCK": "guards that count against two calls starting or ending at once",
    "playground.hw.memory._NVML_STATE": "the pynvml module after nvmlInit(), or why NVML is unavailable: NVML is "
                                        "initialised once per process",
    "playground.hw.ledger._CONTEXT": "each GPU's CUDA context as measured around its first CUDA call: a context is "
                                     "created once per process and GPU, so it can be measured only then",
    "playground.run.loop._takes_logits_to_keep": "whether each model class's forward takes logits_to_keep, read "
                                                 "once per class: inspecting a signature (~0.1 ms) costs more than "
                                                 "a small model's decode step",
    "playground.load.fit._MEASURED": "the activation peak per token measured on each loaded model (held weakly: "
                                     "gone with the model), so that a generation's memory check measures it once",
    # locks around process-wide effects
    "playground.lab.harness._RUN_LOCK": "one lab scenario at a time: warning capture and torch's save tagger are "
                                        "process-wide",
    "playground.lab.scenarios.checkpoints._TAG": "per thread: the device the lab's torch.save tagger records while "
                                                 "the lab saves (torch's tagger registry is process-wide)",
    "playground.lab.scenarios.checkpoints._register_tagger": "registers that tagger with torch.serialization once per "
                                                             "process (a registration cannot be undone)",
    "playground.load.synthetic._LOCK": "one synthetic-model build at a time in this process (a file lock serialises "
                                       "processes)",
    "playground.web.serve._EXITING": "taken by whichever shutdown path comes first (the close or the deadline timer), "
                                     "so the process exits once",
    # measurements and readings that cannot change while the process runs
    "playground.hw.bandwidth._READ": "the memory read rate per device, measured once per process (it takes seconds, "
                                     "and the decode bound of every generation uses it)",
    "playground.hw.bandwidth.host_memcpy": "the host's copy_ rate per size, measured once per process (4 sizes at most)",
    "playground.hw.devices.cpu_name": "the CPU's model name, read once from /proc/cpuinfo",
    "playground.hw.devices.cpu_flags": "the CPU's instruction-set flags, read once from /proc/cpuinfo",
    "playground.load.checkpoint._READ": "per checkpoint folder, what was read from its files (its config, its "
                                        "safetensors headers, the checks it passed, a synthetic model's integrity) "
                                        "with the files' sizes, inodes and times then: the files are the process's "
                                        "(and every visitor's), and a change to one reads it again",
    "playground.load.synthetic._config": "each synthetic model's config, built from its published spec and the bundled "
                                         "tokenizer's vocabulary (both fixed): callers get a copy",
    "playground.load.synthetic._bundled_vocab": "the bundled tokenizer's size and special ids, which every synthetic "
                                                "model copies (loading the tokenizer takes ~20 ms)",
    "playground.web.model_lists.out_of_reach": "the listed models no dtype can ever load on this machine, with why: "
                                               "the machine's RAM and the models' float32 builds do not change while "
                                               "the process runs, and building the largest on meta takes a second",
    "playground.load.estimate._meta_facts": "facts of a model built on the meta device per (config, dtype), 64 at "
                                            "most: building one takes a while and the answer never changes",
    "playground.load.estimate._quantized_bytes": "a model's weight bytes once quantized as int8 or int4, per (config, "
                                                 "dtype), 16 at most: quantizing on meta takes a while and the "
                                                 "answer never changes",
    "playground.load.quantize.torchao": "torchao.quantization, imported once (seconds), its import's log lines kept "
                                        "off the console",
    "playground.load.quantize.offload_refusal": "what Accelerate's offload hooks raise on an int8 weight, tried once "
                                                "per process on a small layer: the installed libraries do not change",
    "playground.load.quantize.refused": "torchao's packed int4 formats and what each raised here, tried once per "
                                        "process on a small layer: the installed libraries do not change",
    "playground.lab.library_text.contains": "whether the installed libtorch holds a string, 64 answers at most (the "
                                            "answers are kept, not the library's data)",
    "playground.lab.gpu_wording._fragments": "the literal pieces of torch's two device-check messages, read once out "
                                             "of the installed libtorch",
    "playground.lab.gpu_wording.fake_template": "FakeTensor's device-mismatch wording, read once out of the installed "
                                                "torch's fake_tensor.py",
    "playground.lab.outcome.ANY_MISMATCH": "a pattern for any two devices, rebuilt on each read from the wordings "
                                           "gpu_wording keeps: holds nothing of its own",
    "playground.lab.gpu_wording._yaml_entry": "an operator's entry in torch's native_functions.yaml, read once per "
                                              "operator",
    "playground.lab.gpu_wording._conv_fragments": "the three literals of the convolution type-check message, read once "
                                                  "out of the installed libtorch",
    "playground.lab.messages.catalog": "every selected message the installed torch, Transformers and Accelerate can "
                                       "raise, read once out of their source",
}

THREADING = {"Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "Barrier", "local", "Queue",
             "SimpleQueue", "LifoQueue", "PriorityQueue", "ContextVar", "WeakValueDictionary", "WeakKeyDictionary",
             "WeakSet", "ThreadPoolExecutor"}
CONTAINER_CALLS = {"dict", "list", "set", "bytearray", "defaultdict", "OrderedDict", "Counter", "deque", "split",
                   "splitlines", "copy"}
CONSTANT_CALLS = {"re.compile", "frozenset", "tuple", "str", "int", "float", "bool", "bytes", "Path", "Path.home", "object",
                  "TypeVar", "os.sysconf", "MappingProxyType", "namedtuple", "NewType", "replace", "strip", "format",
                  "join", "lower", "upper", "removeprefix", "removesuffix"}
CONSTANT_RETURNS = {"str", "int", "float", "bool", "bytes", "Path", "tuple", "frozenset", "None"}
CONTAINER_RETURNS = {"dict", "list", "set", "defaultdict"}
IMMUTABLE_BASES = {"NamedTuple", "Enum", "IntEnum", "StrEnum", "Exception", "ValueError", "RuntimeError"}
MUTATORS = {"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault", "add",
            "discard", "sort", "reverse", "__setitem__", "__delitem__", "difference_update", "intersection_update",
            "symmetric_difference_update"}


def _dotted(node: ast.expr) -> str:
    return ast.unparse(node)


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _definitions(mods: dict[str, Module]) -> dict[str, ast.ClassDef | ast.FunctionDef]:
    """'module:Name' -> the class or function a module defines at its top level."""
    return {f"{m.name}:{n.name}": n for m in mods.values() for n in m.tree.body
            if isinstance(n, (ast.ClassDef, ast.FunctionDef))}


def _frozen(cls: ast.ClassDef) -> bool:
    for d in cls.decorator_list:
        if isinstance(d, ast.Call) and _last(_dotted(d.func)) == "dataclass":
            if any(k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value for k in d.keywords):
                return True
    return any(_last(_dotted(b)) in IMMUTABLE_BASES for b in cls.bases)


def _definition_of(callee: str, mod: Module, bound: dict[str, str]) -> str | None:
    """'module:Name' for a callee written `Name` (defined here or imported) or `module.Name`."""
    root, _, rest = callee.partition(".")
    if root not in bound:
        return None if rest else f"{mod.name}:{callee}"
    if ":" in bound[root]:
        return None if rest else bound[root]
    return f"{bound[root]}:{rest}" if rest and "." not in rest else None


def _follow(target: str | None, defs: dict, bounds: dict[str, dict[str, str]]) -> ast.AST | None:
    """The definition behind 'module:Name', through re-exports (`from .words import W` in a package)."""
    for _ in range(5):
        if target is None or target in defs:
            return defs.get(target or "")
        module, _, name = target.partition(":")
        target = bounds.get(module, {}).get(name)
        target = target if target and ":" in target else None
    return None


def kind(value: ast.expr, mod: Module, defs: dict, bounds: dict[str, dict[str, str]]) -> str | None:
    """"container", a sentence saying why `value` is state, or None for a constant."""
    bound = bounds[mod.name]
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return "container"
    if isinstance(value, ast.BinOp):
        sides = [kind(s, mod, defs, bounds) for s in (value.left, value.right)]
        return "container" if "container" in sides else next((s for s in sides if s), None)
    if not isinstance(value, ast.Call):
        return None  # a literal, a tuple, a type alias, a name or attribute of something else, a lambda
    callee = _dotted(value.func)
    if _last(callee) in THREADING:
        return f"a {callee}()"
    if _last(callee) in CONTAINER_CALLS:
        return "container"
    if callee in CONSTANT_CALLS or _last(callee) in CONSTANT_CALLS:
        return None
    node = _follow(_definition_of(callee, mod, bound), defs, bounds)
    if isinstance(node, ast.ClassDef):
        return None if _frozen(node) else f"an instance of {callee}, which is not frozen"
    if isinstance(node, ast.FunctionDef) and node.returns is not None:
        ret = _dotted(node.returns).split("[")[0].strip("'\"")
        if ret in CONTAINER_RETURNS:
            return "container"
        if ret in CONSTANT_RETURNS:
            return None
    return f"built by {callee}(), which the test cannot classify: list it, or build it from literals"


def _module_level(stmts: list[ast.stmt]):
    """The module's own statements, into if/try/with blocks but not into functions or classes."""
    for s in stmts:
        if isinstance(s, (ast.If, ast.Try, ast.With)):
            yield from _module_level(s.body)
            for h in getattr(s, "handlers", []):
                yield from _module_level(h.body)
            yield from _module_level(getattr(s, "orelse", []) + getattr(s, "finalbody", []))
        else:
            yield s


def _cached(fn: ast.FunctionDef) -> bool:
    return any(_last(_dotted(d.func if isinstance(d, ast.Call) else d)) in ("lru_cache", "cache")
               for d in fn.decorator_list)


def _base_global(expr: ast.expr, mod: Module, mods: dict[str, Module], bound: dict[str, str]) -> tuple[str, str] | None:
    """The (module, name) a chain like X[k].y, mod.X.append, X starts from, when it starts from a global."""
    chain = []
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        chain.append(expr)
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    if not isinstance(expr, ast.Name):
        return None
    if expr.id not in bound:
        return mod.name, expr.id
    target = bound[expr.id]
    if ":" in target:
        m, _, n = target.partition(":")
        return m, n
    for link in reversed(chain):
        if not isinstance(link, ast.Attribute):
            return None
        if f"{target}.{link.attr}" in mods:
            target = f"{target}.{link.attr}"
            continue
        return target, link.attr
    return None


def mutations(mods: dict[str, Module], bounds: dict[str, dict[str, str]]) -> dict[tuple[str, str], str]:
    """(module, name) -> where something first changes it in place (or rebinds it from outside)."""
    out: dict[tuple[str, str], str] = {}
    for mod in mods.values():
        bound = bounds[mod.name]
        for node in mod.nodes:
            changed: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                changed = [t for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))
                           or (isinstance(node, ast.AugAssign) and isinstance(t, ast.Name))]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                changed = [node.func.value]
            for t in changed:
                if (g := _base_global(t, mod, mods, bound)) is not None:
                    out.setdefault(g, f"{mod.file}:{node.lineno}")
    return out


def rebound_through_global(tree: ast.Module) -> dict[str, str]:
    """Name -> the function whose `global` statement rebinds it (the innermost one, and of two functions the later
    in `ast.walk`'s order). One pass: walking each function's subtree again was quadratic in the nesting."""
    out: dict[str, tuple[int, str]] = {}
    queue = collections.deque([(tree, (-1, ""))])
    functions = 0
    while queue:
        node, fn = queue.popleft()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn, functions = (functions, node.name), functions + 1
        elif isinstance(node, ast.Global) and fn[0] >= 0:  # `global` at module level rebinds nothing
            out.update((n, max(out.get(n, fn), fn)) for n in node.names)
        queue.extend((child, fn) for child in ast.iter_child_nodes(node))
    return {n: name for n, (_, name) in out.items()}


def mutable_globals(mods: dict[str, Module]) -> dict[str, str]:
    """'module.name' -> 'file:line: why it is state', for every piece of module-level state."""
    defs = _definitions(mods)
    bounds = {m.name: bound_names(m, mods, TOP) for m in mods.values()}
    changed = mutations(mods, bounds)
    out: dict[str, str] = {}
    for mod in mods.values():
        rebound = rebound_through_global(mod.tree) if "global" in mod.text else {}
        for s in _module_level(mod.tree.body):
            where = f"{mod.file}:{s.lineno}"
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and _cached(s):
                out[f"{mod.name}.{s.name}"] = f"{where}: a functools cache, kept for the life of the process"
            if isinstance(s, ast.ClassDef):
                for f in s.body:
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and _cached(f):
                        out[f"{mod.name}.{s.name}.{f.name}"] = f"{where}: a functools cache on a method, shared by every instance"
            if not isinstance(s, (ast.Assign, ast.AnnAssign)) or s.value is None:
                continue
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for name in [t.id for t in targets if isinstance(t, ast.Name) and not t.id.startswith("__")]:
                what = kind(s.value, mod, defs, bounds)
                if (mod.name, name) in changed:
                    what = f"changed in place at {changed[(mod.name, name)]}"
                elif name in rebound:
                    what = f"rebound by {rebound[name]}() through `global`"
                elif what == "container":
                    what = None if name.lstrip("_").isupper() else "a dict, list or set under a lowercase name"
                if what:
                    out[f"{mod.name}.{name}"] = f"{where}: {what}"
    return out


# ---------------------------------------------------------------- the package as it is

@pytest.fixture(scope="module")
def tree() -> dict[str, Module]:
    return the_package(PACKAGE)


def test_every_module_level_mutable_global_is_listed_with_its_reason(tree):
    found = mutable_globals(tree)
    assert ([f"{name} ({why}): list it in MUTABLE_GLOBALS with what it holds and why it is process-wide"
             for name, why in found.items() if name not in MUTABLE_GLOBALS]
            + [f"{name} is listed but is not module-level state: remove it" for name in MUTABLE_GLOBALS
               if name not in found]) == []


def test_each_listed_reason_is_one_line_saying_what_and_why():
    assert [n for n, why in MUTABLE_GLOBALS.items() if "\n" in why or len(why.split()) < 6] == []


# ---------------------------------------------------------------- the check, fed what it is for

STATE = """\
    import functools, re, threading
    from dataclasses import dataclass
    from pathlib import Path

    @dataclass(frozen=True)
    class Word:
        en: str

    class Slot:
        pass

    def _table() -> dict[str, int]:
        return {}

    def _name() -> str:
        return "x"

    LOCK = threading.Lock()
    _TAG = threading.local()
    SLOT = Slot()
    cache_of_things = {}
    TABLE = {"a": 1}
    REGISTRY = []
    FROM_CALL = _table()
    _CURRENT = None
    UNKNOWN = make_it()

    @functools.lru_cache(maxsize=1)
    def resident():
        return object()

    def register(x):
        REGISTRY.append(x)

    def swap(x):
        global _CURRENT
        _CURRENT = x

    DELETED_FROM = {"a": 1}
    COUNTS = {"a": 1}

    def drop():
        del DELETED_FROM["a"]
        COUNTS["a"] += 1

    class Reader:
        @functools.cache
        def read(self):
            return 1

    # constants
    NAMES = ("a", "b")
    KINDS = frozenset({"x"})
    PATTERN = re.compile("x+")
    WORD = Word("x")
    HOME = Path("/")
    NAME = _name()
    LIMIT = 2 ** 20
    GREETING = "hi" + "there"
    TABLE_NEVER_CHANGED = {"a": 1}
    FROM_CALL_NEVER_CHANGED = _table()
    """


def test_state_of_every_kind_is_found_and_constants_are_not():
    mods = package(**{"hw/state.py": STATE,
                      "load/user.py": "from playground.hw import state\nstate.TABLE['b'] = 2\n",
                      "run/user.py": "from playground.hw.state import FROM_CALL\nFROM_CALL.update(x=1)\n"})
    found = mutable_globals(mods)
    assert sorted(n.rsplit(".", 1)[1] for n in found) == sorted([
        "LOCK", "_TAG", "SLOT", "cache_of_things", "TABLE", "REGISTRY", "FROM_CALL", "_CURRENT", "UNKNOWN",
        "resident", "DELETED_FROM", "COUNTS", "read"])
    assert "playground/load/user.py:2" in found["playground.hw.state.TABLE"]
    assert "playground/run/user.py:2" in found["playground.hw.state.FROM_CALL"]
    assert "rebound by swap()" in found["playground.hw.state._CURRENT"]
    assert "cannot classify" in found["playground.hw.state.UNKNOWN"]
