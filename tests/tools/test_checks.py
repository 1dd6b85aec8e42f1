"""The self-check's rules on recorded readings, its runner's verdicts, and --device's choice of checks."""

from __future__ import annotations

import pytest
import torch

from playground.core.errors import UserError
from playground.tools import checks, selfcheck


def test_greedy_agreement_equal_tokens():
    logits = torch.zeros(3, 10)
    assert checks.greedy_agreement([1, 2, 3], [1, 2, 3], logits, 1e-4) == dict(
        agree=True, first_difference=None, margin=None, compared=3)


def test_greedy_agreement_accepts_a_near_tie_and_refuses_a_clear_choice():
    logits = torch.zeros(3, 10)
    logits[1, 2], logits[1, 7] = 5.0, 5.0 - 1e-5  # the reference chose 2 by 0.00001 over 7
    near = checks.greedy_agreement([1, 2, 3], [1, 7, 4], logits, max_abs_diff=1e-4)
    assert near["agree"] and near["first_difference"] == 1 and near["compared"] == 2  # later tokens not compared
    logits[1, 7] = 4.0  # a margin of 1.0: no numeric difference of 1e-4 flips that
    clear = checks.greedy_agreement([1, 2, 3], [1, 7, 4], logits, max_abs_diff=1e-4)
    assert not clear["agree"] and clear["margin"] == pytest.approx(1.0)


def test_greedy_agreement_different_lengths_is_a_difference():
    r = checks.greedy_agreement([1, 2, 3], [1, 2], torch.zeros(3, 10), 1e-4)
    assert not r["agree"] and r["first_difference"] == 2


@pytest.mark.parametrize("nvml, reserved, allocated, ok", [
    (256 << 20, 256 << 20, 256 << 20, True),          # the driver sees exactly what the allocator reserved
    ((256 + 2) << 20, 256 << 20, 256 << 20, True),    # page granularity
    (0, 256 << 20, 256 << 20, False),                 # reserved but the driver saw nothing: the wrong GPU
    (256 << 20, 256 << 20, 300 << 20, False),         # live tensors beyond the reservation: impossible
    ((256 + 512) << 20, 256 << 20, 256 << 20, False), # 512 MiB more: another process, or a new CUDA context
])
def test_memory_consistency_rule(nvml, reserved, allocated, ok):
    assert checks.memory_consistent(nvml, reserved, allocated) is ok


def _fake(name, fn, device="cpu"):
    return checks.Check(name, device, "proves it", fn)


def test_run_one_turns_each_outcome_into_a_verdict():
    ok = checks.run_one(_fake("a", lambda d: {"x": 1.5}), "cpu")
    assert (ok.status, ok.reason, ok.figures) == ("pass", "", {"x": 1.5}) and ok.seconds >= 0
    skip = checks.run_one(_fake("b", lambda d: (_ for _ in ()).throw(checks.Skip("this PyTorch build has no CUDA"))), "cuda:0")
    assert (skip.status, skip.reason) == ("skip", "this PyTorch build has no CUDA")

    def broken(d):
        checks.expect(False, "tokens differ at 3")

    fail = checks.run_one(_fake("c", broken), "cpu")
    assert fail.status == "fail" and fail.reason == "AssertionError: tokens differ at 3"
    assert fail.to_dict()["proves"] == "proves it"


def test_device_option_selects_checks():
    assert selfcheck.parse_device(None) is None and selfcheck.parse_device("cuda") == "cuda:0"
    with pytest.raises(UserError, match="--device"):
        selfcheck.parse_device("gpu0")
    every = selfcheck.selected(None)
    assert len(every) >= 12 and {c.device for c, _ in every} == {"cpu", "auto", "cuda", "mps"}
    cuda1 = selfcheck.selected("cuda:1")
    assert {c.device for c, _ in cuda1} == {"cuda", "auto"}
    assert all(dev == "cuda:1" for c, dev in cuda1 if c.device == "cuda")
    assert {c.device for c, _ in selfcheck.selected("cpu")} == {"cpu", "auto"}


def test_table_gives_each_skip_its_reason():
    result = dict(checks=[
        checks.Result("load_cpu", "pass", "", "cpu", "p", 0.4, {"load_seconds": 0.123456}).to_dict(),
        checks.Result("cuda_migrate", "skip", "this PyTorch build has no CUDA", "cuda:0", "p", 0.0).to_dict(),
    ], passed=1, failed=0, skipped=1, seconds=1.0,
        machine=dict(cpu="x", cores=2, cuda_build=None, versions={"torch": "2.13.0"}))
    text = selfcheck.table(result)
    assert "load_seconds=0.123" in text and "this PyTorch build has no CUDA" in text
    assert "1 passed, 0 failed, 1 skipped" in text


def test_readme_names_every_check():
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## On a GPU"):]
    section = section[:section.index("\n## ", 5)]
    missing = [c.name for c in checks.REGISTRY if f"`{c.name}`" not in section]
    assert missing == []
