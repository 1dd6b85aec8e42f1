"""The page's tables keep their columns whatever a cell holds."""

import re

from playground.run.compare import CompareRow
from playground.web import compare_views


def test_a_compare_row_whose_error_holds_a_pipe_and_a_line_break_keeps_its_columns():
    row = CompareRow(pair="cpu/float16", model="m", device="cpu", dtype="float16", status="error",
                     error="RuntimeError: expected a | b\nin the second line")
    lines = [ln for ln in compare_views.table([row], "en").splitlines() if ln.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", ln)) for ln in lines}
    assert len(lines) == 3 and widths == {12}, lines  # header, delimiter, the row: 10 cells each


def test_the_estimate_lists_a_first_builds_need_beside_the_loads(tmp_path, monkeypatch):
    """The panel listed a synthetic model's weights and their margin only, and said 'Would be refused' with the
    build's larger figure: it lists the float32 build's need too, and says that is the reason."""
    from playground.core import settings
    from playground.core.units import fmt_bytes
    from playground.web import views
    from tests.conftest import estimate_of

    monkeypatch.setenv("PLAYGROUND_SYNTHETIC_DIR", str(tmp_path / "synthetic"))
    est = estimate_of("synthetic/gpt2-large", "bfloat16")
    monkeypatch.setenv(settings.MEMORY_BUDGET_ENV, str((est.required_bytes + est.build_bytes) // 2))
    for lang, row, why in (("en", "first use: the float32 build in RAM, with the margin", "to build its float32"),
                           ("zh", "首次使用：在内存中构建 float32，含余量", "来构建它的 float32 检查点")):
        shown = views.estimate_markdown(estimate_of("synthetic/gpt2-large", "bfloat16"), lang)
        assert f"| {row} | {fmt_bytes(est.build_bytes)} |" in shown and why in shown.splitlines()[0]
    built = estimate_of("shakespeare-gpt2", "bfloat16")  # nothing to build: no such row
    assert "float32 build" not in views.estimate_markdown(built, "en")
