"""docs/lesson-map.md: at least 40 rows, each pointing somewhere real (or saying why not)."""

from __future__ import annotations

import re

from playground.lab import factcheck
from playground.lab.diagnose import EXTRA
from playground.lab.scenarios import SCENARIOS
from tests.conftest import ROOT

MAP = ROOT / "docs" / "lesson-map.md"
REF = re.compile(r"`(scenario|fact|panel|diagnosis):([a-z0-9-]+)`")


def rows() -> list[str]:
    return [ln for ln in MAP.read_text(encoding="utf-8").splitlines() if re.match(r"^\| \d+ \|", ln)]


def page_ids() -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "playground" / "web").rglob("*.py"))
    return set(re.findall(r'elem_id="([^"]+)"', text))


def test_at_least_forty_rows_numbered_in_order():
    numbers = [int(r.split("|")[1]) for r in rows()]
    assert len(numbers) >= 40 and numbers == list(range(1, len(numbers) + 1))


def test_every_row_points_somewhere_or_says_why_not():
    for row in rows():
        where = row.rstrip(" |").rsplit("|", 1)[1]
        assert REF.search(where) or "not shown, because" in where, row


def test_every_id_it_names_exists():
    known = {"scenario": set(SCENARIOS), "fact": set(factcheck.CLAIMS), "diagnosis": set(EXTRA),
             "panel": page_ids()}
    named = [(kind, name) for row in rows() for kind, name in REF.findall(row)]
    assert len(named) >= 60
    missing = [f"{kind}:{name}" for kind, name in named if name not in known[kind]]
    assert missing == []


def test_every_scenario_and_every_fact_check_is_on_the_map():
    text = MAP.read_text(encoding="utf-8")
    assert [s for s in SCENARIOS if f"scenario:{s}`" not in text] == []
    assert [c for c in factcheck.CLAIMS if f"fact:{c}`" not in text] == []


def test_the_fact_checks_point_at_real_places():
    known = {"scenario": set(SCENARIOS), "panel": page_ids()}
    for c in factcheck.CLAIMS.values():
        kind, _, name = c.where.partition(":")
        assert name in known[kind], (c.id, c.where)
