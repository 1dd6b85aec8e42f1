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
