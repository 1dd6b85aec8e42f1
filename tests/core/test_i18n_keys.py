"""Every i18n key the source names exists, and every key in the table is named somewhere.

The package's source is read, not run: a key is a string literal whose first part is a known prefix
(`"err.not_loaded"`, wherever it appears: `t(...)`, `said(...)`, `translatable(...)`, `UserError.of(...)`, a
tuple of keys, a mapping), or a key built at run time (`f"note.migrate.{code}"`, `"bw.kind." + kind`),
whose variants are listed below from the code's own constants. A key built in a way this test cannot
read, or a variant missing from the table, fails here rather than on a visitor's page.
"""

from __future__ import annotations

import ast
import re
import pytest

import playground.lab.diagnose  # noqa: F401  (the lab's modules register their words on import)
import playground.lab.factcheck  # noqa: F401
import playground.lab.scenarios  # noqa: F401
from playground.core import i18n
from playground.core.i18n import TABLE
from playground.core.paths import PACKAGE
from playground.hw import cpu_threads, ledger
from playground.load.phases import LOAD_PHASES
from playground.lab import oom
from playground.lab.factcheck.claim import VERDICTS
from playground.run import decode, generation
from tests.package_source import the_package

PREFIXES = {p for area in i18n.AREAS for p in area.PREFIXES} | set(i18n.REGISTERED)
KEY = re.compile(r"([a-z_]+)\.[\w.\-]+")
NOT_KEYS = {"gpu.pt": "a file name (lab/factcheck/devices.py)"}

# Keys built at run time -> the values their blank takes, from the code that builds them.
VARIANTS: dict[str, tuple[str, ...]] = {
    "flag.{}": ("device", "dtype", "mixed", "planned"),  # lab/inspect.py: a ModuleRow's flags
    "catalog.{}": ("bundled", "hub", "synthetic"),  # load/catalog.py: an Entry's kind
    "note.migrate.{}": ("noop", "copied", "auto_hooks", "auto_single"),  # load/loader.py: LoadReport.migrate_code
    "cmp.col.{}": ("pair", "status", "runs", "load", "migrate", "ttft", "rate", "bound", "rss", "weights"),
    "cmp.status.{}": ("ok", "error", "refused", "stopped", "skipped", "pending"),  # run/compare.py: CompareRow.status
    "engine.{}": (*generation.ENGINES, generation.COMPILED),  # the page's engines, and the Speed tab's fourth
    "page.decoding.{}": ("sampled", "greedy", "custom"),  # web/views.py: decoding_choices
    "finish.{}": ("running", "length", "eos", "stopped"),  # run/generation.py: GenerationStats.finish_reason
    "stats.{}": tuple(k for k, v in decode.profile([0.1, 0.2]).items() if isinstance(v, float)),
    "dev.col.{}": ("device", "state", "note"),  # web/views.py: devices_html
    "dev.threads_{}": cpu_threads.WHY,  # hw/devices.py: why torch has that many CPU threads
    # the timeline's phases: a load's (load/phases.py), a generation's, and before the first mark
    "phase.name.{}": (*LOAD_PHASES, "warm-up", "prefill", "decode", "agreement", ""),
    "report.{}": tuple(p for p in LOAD_PHASES if p not in ("migrate", "eval")),  # run/render.py: a phase's "what"
    "bw.kind.{}": ("read", "memcpy", "cast", "h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned"),
    "bw.how.{}": ("read", "memcpy", "cast"),  # web/views_speed.py: the CPU's rows
    "fact.verdict.{}": tuple(v.replace(" ", "_") for v in VERDICTS),
    "bw.gap.{}": ("measured", "predicted", "pinned", "link", "tutorial", "cast"),  # web/views_speed.py: gap_markdown
    # web/views_placement.py: a block's store (load/placemap.py), the runs, the breakdown's parts, the cliff's series,
    # the two load paths (load/straight.py), the two forms, the tiers' colours, where a tier's bytes came from
    "place.store.{}": ("resident", "cpu-state-dict", "checkpoint", "offload-folder", "none", "mixed"),
    "place.run.{}": ("ram", "warm", "cold"),
    "place.series.{}": ("warm", "cold", "bound"),
    "place.path.{}": ("straight", "then_move"),
    "place.straight.form.{}": ("dtype", "device"),
    "place.tier.{}": ("cuda", "mps", "cpu", "disk", "meta", "mixed"),
    "place.offered.{}": ("limit", "free"),
    "quant.skip.{}": ("embedding", "tied", "not_linear", "group"),  # load/quantize.py: LayerChoice.reason
    "cmp.dtype.col.{}": ("pair", "weights", "prefill", "decode", "same", "logits", "ops"),  # web/compare_views.py
    "cmp.dtype.speed.{}": ("faster", "slower", "unclear"),  # web/compare_views.py: dtype_sentences
    "lesson.dtype.speed.{}": ("faster", "slower", "unclear"),  # web/lesson.py: dtype_step
    "lesson.dtype.skip.{}": ("embedding", "tied", "not_linear", "group"),  # web/lesson.py: dtype_step
    "flag.offloaded_{}": ("disk", "ram"),  # lab/render.py: a module Accelerate's plan offloaded, where to
    # the memory ledger (hw/ledger.py's names, run/render.py's table, web/views.py's bars) and the fit's table
    "ledger.part.{}": ledger.PARTS,
    "ledger.short.{}": ledger.PARTS,  # the bars' legends
    "ledger.counter.{}": ledger.COUNTERS,
    "ledger.col.{}": ("part", "bytes", "counter", "estimate", "error"),
    "ledger.{}": ("after_load", "after_generation"),  # the moment a ledger was read
    "ledger.bar.{}": ("process", "device"),
    "ledger.total.{}": ("cpu", "gpu", "mps"),
    "oom.part.{}": oom.PARTS,  # lab/oom.py: an out-of-memory message's bar
    "oom.kind.{}": oom.KINDS,
}


def _sources() -> dict[str, ast.AST]:
    """Every module of the package but the tables themselves (they define keys, they do not use them)."""
    return {m.file.partition("/")[2]: m.tree for m in the_package(PACKAGE).values() if "core/i18n" not in m.file}


def _pattern(node: ast.AST) -> str | None:
    """A key built at run time as a pattern with `{}` for each blank, or None if `node` builds none."""
    if isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant):
        parts = [node.left.value, "{}"]
    else:
        return None
    head = parts[0] if isinstance(parts[0], str) and parts[0] != "{}" else ""
    m = re.match(r"([a-z_]+)\.", head)
    return "".join(parts) if m and m.group(1) in PREFIXES else None


def _registering(tree: ast.AST) -> set[int]:
    """The nodes under `register(...)` calls: they define a key (beside its code) rather than use one."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "register":
            out |= {id(n) for n in ast.walk(node)}
    return out


def collect(tree: ast.AST, path: str = "") -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(key -> where it is named, pattern -> where it is built) in one module."""
    keys: dict[str, list[str]] = {}
    patterns: dict[str, list[str]] = {}
    skip = _registering(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        where = f"{path}:{getattr(node, 'lineno', '?')}"
        pattern = _pattern(node)
        if pattern is not None:
            patterns.setdefault(pattern, []).append(where)
            skip |= {id(n) for n in ast.walk(node)}  # its pieces ("bw.kind.") are not keys themselves
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = KEY.fullmatch(node.value)
            if m and m.group(1) in PREFIXES and node.value not in NOT_KEYS:
                keys.setdefault(node.value, []).append(where)
    return keys, patterns


def used_keys() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """`collect` over the whole package."""
    keys: dict[str, list[str]] = {}
    patterns: dict[str, list[str]] = {}
    for path, tree in _sources().items():
        k, p = collect(tree, path)
        for mine, theirs in ((keys, k), (patterns, p)):
            for name, where in theirs.items():
                mine.setdefault(name, []).extend(where)
    return keys, patterns


@pytest.fixture(scope="module")
def used() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """`used_keys()` once for this module's tests, when they run (not at collection: it parses the package)."""
    return used_keys()


def test_the_source_names_keys_and_builds_some(used):
    """The collector finds what it should (a broken collector would pass everything below)."""
    KEYS, PATTERNS = used
    assert len(KEYS) > 400 and {"err.not_loaded", "progress.load", "ui.fix"} <= set(KEYS)
    assert {"note.migrate.{}", "cmp.status.{}", "phase.name.{}"} <= set(PATTERNS)


def test_every_key_named_in_the_source_exists(used):
    KEYS, _ = used
    missing = {k: where for k, where in KEYS.items() if k not in TABLE}
    assert not missing, missing


def test_every_key_built_at_run_time_has_its_variants_listed_and_each_exists(used):
    _, PATTERNS = used
    unlisted = {p: where for p, where in PATTERNS.items() if p not in VARIANTS}
    assert not unlisted, f"list the values of these keys' blanks in VARIANTS: {unlisted}"
    missing = [p.format(v) for p in PATTERNS for v in VARIANTS[p] if p.format(v) not in TABLE]
    assert not missing, missing
    assert not set(VARIANTS) - set(PATTERNS), "VARIANTS lists a pattern the source no longer builds"


def test_every_key_in_the_table_is_used(used):
    KEYS, PATTERNS = used
    built = {p.format(v) for p in PATTERNS for v in VARIANTS.get(p, ())}
    registered = {k for k in TABLE if k.split(".")[0] in i18n.REGISTERED}  # used by the code they sit beside
    unused = sorted(set(TABLE) - set(KEYS) - built - registered)
    assert not unused, f"words nothing says (delete them, or use them): {unused}"


@pytest.mark.parametrize("text, found", [
    ('t("ui.fix", lang)', {"ui.fix"}),
    ('UserError.of("err.not_loaded")', {"err.not_loaded"}),
    ('x = ("stats.ttft", "stats.new")', {"stats.ttft", "stats.new"}),
    ('open("gpu.pt")', set()),
    ('said(f"note.migrate.{code}")', {"note.migrate.{}"}),
    ('t("bw.kind." + kind)', {"bw.kind.{}"}),
    ('register(f"scenario.{sid}.title", w)', set()),
])
def test_the_collector_reads_each_way_a_key_is_written(text, found):
    keys, patterns = collect(ast.parse(text))
    assert set(keys) | set(patterns) == found


# Where a plain UserError("English") may still be raised: only places no page reaches, each with why.
ENGLISH_ONLY = {
    "tools/cli.py": "the CLI's own argument errors",
    "tools/console.py": "the command line's parser (its argument errors), shared by the CLI and the benches",
    "tools/bench.py": "python -m playground.bench's arguments",
    "tools/selfcheck.py": "python -m playground selfcheck's --device",
    "tools/space.py": "python -m playground.space's output folder",
    "core/units.py": "parse_bytes reads PLAYGROUND_MEMORY_BUDGET at start-up only, and settings replaces its "
                     "error by its own line for the operator (settings.Malformed)",
}


def test_a_user_error_a_page_can_show_has_a_key():
    """`UserError("...")` is English on the Chinese page too: outside ENGLISH_ONLY, every one is
    `UserError.of(key, ...)`, said in the page's language."""
    raised = {(path, node.lineno) for path, tree in _sources().items() for node in ast.walk(tree)
              if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "UserError"}
    assert not sorted(f"{path}:{line}" for path, line in raised if path not in ENGLISH_ONLY)
    stale = set(ENGLISH_ONLY) - {path for path, _ in raised}
    assert not stale, f"no plain UserError is left in {sorted(stale)}: take them off ENGLISH_ONLY"
