"""The words: every text exists in English and Chinese, with the same fields, by construction and by check."""

from __future__ import annotations

import re

import pytest

from playground.core import i18n
from playground.core.i18n import TABLE, W, said, t
from playground.lab.diagnose import EXTRA
from playground.lab.scenarios import SCENARIOS

CJK = re.compile(r"[\u4e00-\u9fff]")


def every_text() -> dict[str, W]:
    """Every W of the playground: the area tables, and the lab's own words beside its scenarios."""
    out = dict(TABLE)
    for sc in SCENARIOS.values():
        out[f"{sc.id}.title"], out[f"{sc.id}.explain"] = sc.title, sc.explain
        out.update({f"{sc.id}.m.{k}": w for k, w in sc.labels.items()})
    for sid, d in EXTRA.items():
        out[f"{sid}.title"], out[f"{sid}.explain"] = d.title, d.explain
    return out


def fields(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)", text))


def test_areas_share_no_key_and_make_the_table():
    areas = [area.TEXT for area in i18n.AREAS]
    assert sum(len(a) for a in areas) == len(TABLE)
    with pytest.raises(KeyError):
        i18n._merge({"x": W("a", "甲")}, {"x": W("b", "乙")})  # noqa: SLF001  (the guard itself)


@pytest.mark.parametrize("key", sorted(every_text()))
def test_every_text_has_both_languages_with_the_same_fields(key):
    w = every_text()[key]
    assert isinstance(w, W) and w.en.strip() and w.zh.strip(), key
    # the Chinese is a translation, not a copy (a copy is fine for a bilingual label, or for names and code)
    prose = re.sub(r"`[^`]*`|\{[^}]*\}", "", w.en)
    assert w.zh != w.en or CJK.search(w.en) or not re.search(r"\b[a-z]{3,}\b", prose), key
    # a sentence in Chinese, or only punctuation, units and names around the fields
    assert CJK.search(w.zh) or re.fullmatch(r"[\s\w{}:.,;=+()（）；。，%×x/·'\"-]*", w.zh), key
    # the same fields on both sides, so a translation cannot drop a number
    assert fields(w.en) - {"what"} == fields(w.zh) - {"what_zh"}, key


def test_said_is_a_fact_said_later_in_either_language():
    s = said("ui.real", device="cpu")
    assert s.text("en") == "Run for real on cpu." and s.text("zh") == "在 cpu 上真实运行。"
    nested = said("est.where.frees", where=said("est.where.system"), frees="1.0 GiB")
    assert "available system RAM" in nested.text("en") and "系统可用内存" in nested.text("zh")
    assert t("no.such.key") == "no.such.key"


def _literal(node) -> str | None:
    """The text of a string literal, an implicit concatenation or a `+` of literals; None otherwise."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left), _literal(node.right)
        return a + b if a is not None and b is not None else None
    return None


def test_every_w_written_anywhere_in_the_package_has_both_languages_and_the_same_fields():
    """Beyond the tables: the W(...) beside scenarios, fact checks and their evidence, read from the source."""
    import ast

    from playground.core.paths import PACKAGE

    seen = 0
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "W" and len(node.args) == 2:
                en, zh = (_literal(a) for a in node.args)
                if en is None or zh is None:
                    continue
                seen += 1
                where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                assert en.strip() and zh.strip(), where
                assert CJK.search(zh) or re.fullmatch(r"[\s\w{}:.,;=+()（）；。，%×x/·'\"-]*", zh), where
                assert fields(en) - {"what"} == fields(zh) - {"what_zh"}, where
    assert seen > 300
