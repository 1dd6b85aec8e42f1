"""The words: every text exists in English and Chinese, with the same fields, by construction and by check."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest

from playground.core import i18n
from playground.core.i18n import TABLE, W, bilingual, said, t, translatable
import playground.lab.factcheck  # noqa: F401  (the claims register their words on import)
from playground.lab.diagnose import EXTRA
from playground.lab.scenarios import SCENARIOS

CJK = re.compile(r"[\u4e00-\u9fff]")


def every_text() -> dict[str, W]:
    """Every W of the playground: the area tables, and the words the lab registers beside its code."""
    return dict(TABLE)


def test_the_lab_registers_its_words():
    for sc in SCENARIOS.values():
        assert {sc.title, sc.explain, *sc.labels.values()} <= set(TABLE), sc.id
    for d in EXTRA.values():
        assert {d.title, d.explain} <= set(TABLE), d.id
    assert {k.split(".")[0] for k in TABLE} >= set(i18n.REGISTERED)


def fields(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)", text))


def test_each_prefix_lives_in_one_area_file():
    """`err.` is in errors.py and nowhere else: every key's prefix is one of its own area's PREFIXES,
    no prefix belongs to two areas, and the areas together are the table (before the lab registers)."""
    owner: dict[str, str] = {}
    for area in i18n.AREAS:
        for prefix in area.PREFIXES:
            assert prefix not in owner, (prefix, owner.get(prefix), area.__name__)
            owner[prefix] = area.__name__
        assert {k.split(".")[0] for k in area.TEXT} <= set(area.PREFIXES), area.__name__
    assert not set(owner) & set(i18n.REGISTERED)
    areas_keys = {k for area in i18n.AREAS for k in area.TEXT}
    assert sum(len(area.TEXT) for area in i18n.AREAS) == len(areas_keys)
    assert {k for k in TABLE if k.split(".")[0] not in i18n.REGISTERED} == areas_keys


def _area(name: str, prefixes: tuple, text: dict):
    return SimpleNamespace(__name__=name, PREFIXES=prefixes, TEXT=text)


def test_merge_refuses_a_prefix_in_two_areas_and_a_key_outside_its_area():
    with pytest.raises(KeyError, match="'x' claimed by a and b"):
        i18n._merge(_area("a", ("x",), {"x.one": W("a", "甲")}), _area("b", ("x",), {"x.two": W("b", "乙")}))  # noqa: SLF001
    with pytest.raises(KeyError, match=r"outside its PREFIXES.*y\.one"):
        i18n._merge(_area("a", ("x",), {"y.one": W("a", "甲")}))  # noqa: SLF001
    with pytest.raises(KeyError, match="claimed by register"):
        i18n._merge(_area("a", ("scenario",), {}))  # noqa: SLF001


def test_an_unknown_key_fails_loudly():
    with pytest.raises(KeyError) as e:
        t("no.such.key")
    assert e.value.args == ("no.such.key",)
    with pytest.raises(KeyError):
        said("no.such.key").text("zh")
    with pytest.raises(KeyError):
        translatable("progress.no_such_line")


def test_register_adds_words_under_a_lab_prefix_once():
    key = "scenario.test-only.title"
    try:
        assert i18n.register(key, W("A title", "标题")) == key and t(key, "zh") == "标题"
        i18n.register(key, W("A title", "标题"))  # the same words again: a module imported twice
        with pytest.raises(KeyError):
            i18n.register(key, W("Another title", "另一个标题"))
    finally:
        TABLE.pop(key, None)
    with pytest.raises(KeyError):
        i18n.register("err.made_up", W("a", "甲"))  # a table's prefix: its words live in that file
    with pytest.raises(TypeError):
        i18n.register("scenario.test-only.explain", "English only")


def _bold_runs(html: str) -> list[str] | None:
    """The text of each <strong> in rendered HTML, tags dropped; None where one sits inside another."""
    out, depth, cur = [], 0, []
    for piece in re.split(r"(</?strong>)", html):
        if piece == "<strong>":
            depth, cur = depth + 1, []
            if depth > 1:
                return None
        elif piece == "</strong>":
            depth -= 1
            out.append(re.sub(r"<[^>]+>", "", "".join(cur)))
        elif depth:
            cur.append(piece)
    return out


def test_every_bold_in_every_text_closes_where_it_is_written():
    """Markdown closes `**` only where the run is right-flanking: after a full-width colon and before a Chinese
    character (`**已加载：**还没有`) it does not, and the page showed the asterisks (or bolded the rest of the
    line). Each text is rendered as the page's Markdown does (CommonMark), fields filled in: every `**...**`
    written in it must come out as one <strong> with that text."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    wrong = []
    for key, w in sorted(every_text().items()):
        for lang in ("en", "zh"):
            text = re.sub(r"\{[^}]*\}", "X", getattr(w, lang))
            written = [b.replace("`", "") for b in re.findall(r"\*\*(.+?)\*\*", text, re.S)]
            shown = _bold_runs(md.render(text))
            if shown is None or [html.unescape(b) for b in shown] != written:
                wrong.append(f"{key} ({lang}): {getattr(w, lang)[:60]!r} -> {shown}")
    assert wrong == [], "\n".join(wrong)


def text_problems(key: str, w) -> list[str]:
    """What is wrong with one text of the word tables (nothing: an empty list)."""
    if not (isinstance(w, W) and w.en.strip() and w.zh.strip()):
        return ["a language is empty"]
    out = []
    # the Chinese is a translation, not a copy (a copy is fine for a bilingual label, or for names and code)
    prose = re.sub(r"`[^`]*`|\{[^}]*\}", "", w.en)
    if not (w.zh != w.en or CJK.search(w.en) or not re.search(r"\b[a-z]{3,}\b", prose)):
        out.append("the Chinese is a copy of the English")
    # a sentence in Chinese, or only punctuation, units and names around the fields
    if not (CJK.search(w.zh) or re.fullmatch(r"[\s\w{}:.,;=+*()（）；。，、：`%×x/·'\"-]*", w.zh)):
        out.append("the Chinese is not Chinese")
    # the same fields on both sides, so a translation cannot drop a number
    if fields(w.en) - {"what"} != fields(w.zh) - {"what_zh"}:
        out.append(f"fields differ: en {sorted(fields(w.en))}, zh {sorted(fields(w.zh))}")
    return out


def test_every_text_has_both_languages_with_the_same_fields():
    """One check over every text of the word tables, naming every bad key at once (it was one test per key:
    1,265 items of the suite's count, and a run stopped at the first bad key)."""
    bad = {key: why for key, w in sorted(every_text().items()) if (why := text_problems(key, w))}
    assert bad == {}, "\n".join(f"{k}: {'; '.join(v)}" for k, v in bad.items())


def test_each_text_problem_is_named():
    assert text_problems("k", W("{n} tokens", "{n} 个 token")) == []
    assert text_problems("k", W("two words here", "two words here")) == ["the Chinese is a copy of the English"]
    assert text_problems("k", W("load", "загрузка!")) == ["the Chinese is not Chinese"]
    assert text_problems("k", W("{n} tokens in {s} s", "{n} 个 token")) == ["fields differ: en ['n', 's'], zh ['n']"]


def test_said_is_a_fact_said_later_in_either_language():
    s = said("ui.real", device="cpu")
    assert s.text("en") == "Run for real on cpu." and s.text("zh") == "在 cpu 上真实运行。"
    nested = said("est.where.frees", where=said("est.where.system"), frees="1.0 GiB")
    assert "available system RAM" in nested.text("en") and "系统可用内存" in nested.text("zh")


def test_bilingual_says_the_named_words_in_both_languages_in_their_place():
    d = bilingual({"title": said("ui.real", device="cpu"), "note": said("ui.fix"), "simulation": None, "n": 3},
                  "title", "simulation")
    assert list(d) == ["title_en", "title_zh", "note", "simulation_en", "simulation_zh", "n"]
    assert d["title_en"] == "Run for real on cpu." and d["title_zh"] == "在 cpu 上真实运行。"
    assert d["note"] == "The fix" and d["simulation_en"] == d["simulation_zh"] == "" and d["n"] == 3


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
                assert CJK.search(zh) or re.fullmatch(r"[\s\w{}:.,;=+*()（）；。，、：`%×x/·'\"-]*", zh), where
                assert fields(en) - {"what"} == fields(zh) - {"what_zh"}, where
    assert seen > 300


def test_english_counts_its_nouns_and_no_text_says_one_in_the_plural():
    """"{n} {n?block|blocks}" says 1 block, 2 blocks; the tables no longer write "block(s)" for either."""
    w = W("{n} {n?block|blocks} for {v} {v?visitor|visitors}", "{n} 个块，{v} 位访客")
    assert (w.say("en", n=1, v=2), w.say("en", n=0, v=1)) == ("1 block for 2 visitors", "0 blocks for 1 visitor")
    assert w.say("zh", n=1, v=2) == "1 个块，2 位访客"
    assert t("pool.waited", "en", n=1).startswith("Measured while 1 other visitor waited")
    assert [k for k, w in i18n.TABLE.items() if re.search(r"\{\w+\} (other )?\w+\(s\)", w.en)] == []
