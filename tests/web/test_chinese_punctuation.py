"""The Chinese page punctuates as Chinese: no ASCII colon, full stop, comma or parenthesis against a Chinese
character in the load report, the generation's stats and the Speed tab (rendered from live measurements)."""

import re

import pytest

from playground.load import loader
from playground.run import render
from playground.run.pool import POOL
from playground.web import handlers_speed as hs

CJK = r"[\u4e00-\u9fff]"
MIXED = [  # in a line of Chinese text
    re.compile(r"(?<![\d.])[.:;,](?=\s|\*|$)"),  # "内存检查:** ", "不含 CUDA.", "（`sum()`, 512 MiB）"
    re.compile(r"[\u4e00-\u9fff）]\s?\("),  # "（bfloat16） (Σ ...)"
    re.compile(r"\*\*[^*\n]*[：。]\*\*(?=" + CJK + ")"),  # bold closed after full-width punctuation, before a letter
]


def mixed(markdown: str) -> list[str]:
    prose = re.sub(r"`[^`]*`", "`x`", markdown)  # code keeps its own punctuation
    return [f"{m.group(0)!r} in {line.strip()[:80]!r}" for line in prose.splitlines() if re.search(CJK, line)
            for rx in MIXED for m in rx.finditer(line)]


def test_the_check_finds_what_it_looks_for():
    assert mixed("**内存检查:** 在 meta 上") and mixed("不含 CUDA.") and mixed("10.2 MiB（bfloat16） (Σ 元素)")
    assert mixed("**已加载：**模型") and not mixed("**内存检查**：在 `f(a, b).` 上（x）。")


@pytest.fixture(scope="module")
def loaded():
    POOL.clear()
    report = POOL.load(*loader.parse("shakespeare-gpt2", "cpu", "bfloat16"))
    yield report
    POOL.clear()


def test_the_load_report_and_the_stats(loaded):
    assert mixed(render.report_markdown(loaded, "zh")) == []
    from playground.core.inputs import GenerationParams
    *_, (_text, stats) = POOL.generate("ROMEO:", GenerationParams(max_new_tokens=8, temperature=0.0))
    d = stats.to_dict() if hasattr(stats, "to_dict") else stats.__dict__
    assert mixed(render.stats_markdown(stats, "zh") + render.per_token_markdown(d, "zh")) == []


@pytest.mark.slow
def test_the_speed_tab(loaded):
    md, _ = hs.ui_bandwidth("zh")
    assert mixed(md) == []
    *_, (engines_md, _d) = hs.ui_engines(8, False, "zh", None, progress=lambda *a, **k: None)
    assert mixed(engines_md) == []
