"""Do two devices choose the same greedy tokens? The rule the cross-device tests judge by.

Two devices computing the same model sum in different orders (different kernels), so
their logits differ by a little; greedy decoding then agrees token for token except at
a near-tie, where that little can flip the choice. After the first differing token the
contexts differ, so later tokens are not comparable. The device tests
(`tests/run/test_engines.py`, on each GPU present) feed it live readings; its unit
tests feed it recorded ones.
"""

from __future__ import annotations

import torch


def greedy_agreement(ref_ids: list[int], ids: list[int], ref_logits: torch.Tensor, max_abs_diff: float) -> dict:
    """Do two greedy runs agree within tolerance? `ref_ids` chose by `ref_logits` (one row of logits per
    generated position, from the reference device), `ids` on the other device, whose logits for the
    same sequence differ from the reference's by at most `max_abs_diff` (measured, teacher-forced).

    The tokens must be equal up to the first position where they differ; there, the reference's
    margin between its choice and the other device's choice must be within 2 x max_abs_diff (a
    near-tie that the measured numeric difference can flip). Returns {agree, first_difference,
    margin, compared}."""
    n = min(len(ref_ids), len(ids))
    first = next((i for i in range(n) if ref_ids[i] != ids[i]), None)
    if first is None:
        return dict(agree=len(ref_ids) == len(ids), first_difference=None if len(ref_ids) == len(ids) else n,
                    margin=None, compared=n)
    row = ref_logits[first].to(torch.float32)
    margin = float(row[ref_ids[first]] - row[ids[first]])
    return dict(agree=margin <= 2 * max_abs_diff, first_difference=first, margin=margin, compared=first + 1)


def dtype_tolerance(dtype: torch.dtype) -> float:
    """Largest logit difference expected between two devices computing the same model in `dtype`
    (different kernels sum in different orders): machine epsilon x a few hundred, for logits of order 10."""
    return {torch.float32: 1e-3, torch.bfloat16: 0.5, torch.float16: 0.1}.get(dtype, 1e-3) * 10
