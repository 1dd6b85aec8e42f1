"""The lab's results as the page shows them: code as written, the simulation after the message it explains,
a harmless order not called a mistake, and each language's own punctuation."""

from __future__ import annotations

import re

from playground.core.i18n import said, t
from playground.lab import render
from playground.lab.result import BreakResult, TensorRow

CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
CJK = r"[\u4e00-\u9fff]"


def entities_in_code(md: str) -> list[str]:
    """HTML entities inside Markdown code spans: Markdown shows them as typed (`&#x27;`), never as the character.
    A <pre> block is raw HTML, not Markdown: a backtick inside it (CUDA's "Search for `cudaErrorAssert' in") opens
    no code span, so the blocks are left out first."""
    md = re.sub(r"<pre>.*?</pre>", "", md, flags=re.S)
    return [m.group(2) for m in CODE_SPAN.finditer(md) if re.search(r"&(#x?[0-9a-fA-F]+|[a-z]+);", m.group(2))]


def ascii_after_chinese(md: str) -> list[str]:
    """Latin punctuation right after a Chinese character, outside code: "匹配到的行: ", "证据 (". """
    prose = re.sub(r"<(pre|code)>.*?</\1>|`[^`]*`", "", md, flags=re.S)
    return re.findall(CJK + r"\*{0,2}(?::|\s?\()", prose)


def result(**kw) -> BreakResult:
    base = dict(scenario="inputs-on-cpu", number=1, title=said("scenario.inputs-on-cpu.title"),
                explanation=said("scenario.inputs-on-cpu.explain"), fix_before="a", fix_after="b", fix_ok=True,
                fix_seconds=0.01)
    return BreakResult(**{**base, **kw})


def test_names_in_code_show_as_written():
    """A tensor's name in the table is a code span: escaped as HTML, it showed `param_groups[0][&#x27;params&#x27;][0]`."""
    r = result(tensors=[TensorRow("optimizer.param_groups[0]['params'][0]", "cpu", "float64", [2, 2])],
               flagged_modules=["blocks<0>"])
    for lang in ("en", "zh"):
        md = render.result_markdown(r, lang)
        assert entities_in_code(md) == [], entities_in_code(md)
        assert "`optimizer.param_groups[0]['params'][0]`" in md and "`blocks<0>`" in md


def test_a_simulation_is_explained_under_the_message_it_explains():
    """Its words say "raised the message above" and "its message is shown below": they were printed above the
    message, after a "Simulated:" label that repeated their first word ("Simulated: Simulated on a fake...")."""
    r = result(raised=True, error_type="RuntimeError", error_message="Expected all tensors to be on the same device",
               simulated=True, simulation=said("sim.both", how=said("sim.fake_cuda"), differs=said("sim.fake_cuda_differs")),
               real_gpu_message="...wrapper_CUDA__index_select)")
    for lang in ("en", "zh"):
        md = render.result_markdown(r, lang)
        how = r.simulation.text(lang)
        assert md.index(r.error_message) < md.index(how) < md.index(r.real_gpu_message), lang
        assert md.index(t("ui.simulated_top", lang)) < md.index(r.error_message)
        assert not re.search(r"(Simulated|模拟)\W{0,8}(Simulated|模拟)", md), lang
    assert "**How it was simulated:** On a fake cuda:0 device" in render.result_markdown(r, "en")


def test_a_harmless_order_is_not_called_a_mistake():
    """Scenario 19 is titled "(not a mistake)": its result said "this mistake is silent", "Before (the mistake)"
    and "The fix works"."""
    r = result(scenario="optimizer-before-to", number=19, title=said("scenario.optimizer-before-to.title"),
               explanation=said("scenario.optimizer-before-to.explain"), broken_output="True")
    en, zh = render.result_markdown(r, "en"), render.result_markdown(r, "zh")
    assert "(not a mistake)" in en and "harmless" in en and "The tutorials' order" in en
    for word in ("mistake is silent", "(the mistake)", "The fix"):
        assert word not in en.replace("(not a mistake)", ""), word
    assert "错误写法" not in zh and "修复有效" not in zh and "无害" in zh
    ordinary = render.result_markdown(result(), "en")  # every other scenario keeps its words
    assert "Before (the mistake)" in ordinary and "The fix works" in ordinary


def test_chinese_labels_take_chinese_punctuation():
    r = result(raised=True, error_type="RuntimeError", error_bases=["Exception"], error_message="boom",
               frame="x.py:1 in f", raised_in="y.py:2 in g", fix_output="done",
               tensors=[TensorRow("exp_avg", "cuda:0", "float32", [2], note=said("ui.row.in_file"))])
    zh = render.result_markdown(r, "zh")
    assert ascii_after_chinese(zh) == [], ascii_after_chinese(zh)
    assert "`exp_avg`（文件中）" in zh and "**错误**：`RuntimeError`（Exception）" in zh
    assert "`exp_avg` (in the file)" in render.result_markdown(r, "en")
