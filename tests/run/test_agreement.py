"""The cross-device token rule on recorded logits: equal tokens agree, a near-tie may differ, a clear choice may not."""

from __future__ import annotations

import pytest
import torch

from playground.run.agreement import dtype_tolerance, greedy_agreement


def test_equal_tokens_agree():
    assert greedy_agreement([1, 2, 3], [1, 2, 3], torch.zeros(3, 10), 1e-4) == dict(
        agree=True, first_difference=None, margin=None, compared=3)


def test_a_near_tie_may_differ_and_a_clear_choice_may_not():
    logits = torch.zeros(3, 10)
    logits[1, 2], logits[1, 7] = 5.0, 5.0 - 1e-5  # the reference chose 2 by 0.00001 over 7
    near = greedy_agreement([1, 2, 3], [1, 7, 4], logits, max_abs_diff=1e-4)
    assert near["agree"] and near["first_difference"] == 1 and near["compared"] == 2  # later tokens not compared
    logits[1, 7] = 4.0  # a margin of 1.0: no numeric difference of 1e-4 flips that
    clear = greedy_agreement([1, 2, 3], [1, 7, 4], logits, max_abs_diff=1e-4)
    assert not clear["agree"] and clear["margin"] == pytest.approx(1.0)


def test_different_lengths_are_a_difference():
    r = greedy_agreement([1, 2, 3], [1, 2], torch.zeros(3, 10), 1e-4)
    assert not r["agree"] and r["first_difference"] == 2


def test_16_bit_dtypes_tolerate_more_than_float32():
    assert dtype_tolerance(torch.float32) < dtype_tolerance(torch.float16) < dtype_tolerance(torch.bfloat16)
