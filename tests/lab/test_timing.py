"""The paired-rounds verdict: the sentence is chosen from the interval it is shown beside."""

from __future__ import annotations

import pytest

from playground.lab.timing import Ratio


def ratio(low: float, high: float, median: float) -> Ratio:
    return Ratio("bfloat16", "float32", 7, median, low, high, low, high, 4.0, 5.0)


@pytest.mark.parametrize("low, high, key", [
    (0.75, 0.9089, "timing.same"),    # shown as 0.75-0.91: not wholly below 1/1.10 = 0.909 as the reader sees it
    (0.75, 0.9049, "timing.faster"),  # shown as 0.75-0.90
    (1.1049, 1.4, "timing.same"),     # shown as 1.10-1.40: not wholly above 1.10
    (1.1051, 1.4, "timing.slower"),   # shown as 1.11-1.40
])
def test_the_verdict_follows_the_interval_as_shown(low, high, key):
    v = ratio(low, high, (low + high) / 2).verdict()
    assert v.key == key, v.text("en")
    shown_low, shown_high = v.fields["low"], v.fields["high"]
    assert f"{shown_low}" in v.text("en") or f"{shown_low:.2f}" in v.text("en")
    assert (shown_high < 1 / 1.10) == (key == "timing.faster") and (shown_low > 1.10) == (key == "timing.slower")
