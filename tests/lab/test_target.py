"""The device target, with CUDA made to look present: the hosts the suite may run on, as data.

No GPU is needed to check what the suite and the page would do on one: `Host` is the machine as data
(how many CUDA devices, whether MPS works), and `Host.here()` reads it from torch, which the tests
patch to look like a one- or a two-GPU machine. For each such host: the targets the device tests run
over, the target the page uses for each scenario, and that every (scenario, target kind) the suite
would meet has an expected outcome in the scenario's data. Where a scenario's live outcome depends on
the host alone (a GPU checkpoint, resumed), it is run live under the look-alike CUDA.
"""

from __future__ import annotations

import ast

import pytest
import torch

from playground.lab import harness, scenarios, target
from playground.lab.target import SIMULATED, Host, Target
from tests.conftest import ROOT

PROFILES = {"cpu": Host(), "one GPU": Host(cuda=1), "two GPUs": Host(cuda=2), "mac": Host(mps=True),
            "four GPUs": Host(cuda=4)}


def looks_like(monkeypatch, cuda: int) -> None:
    """Make torch report `cuda` CUDA devices (and no MPS), for the code that asks it."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


@pytest.mark.parametrize("cuda", [0, 1, 2])
def test_the_host_and_its_targets_are_read_from_torch(monkeypatch, cuda):
    looks_like(monkeypatch, cuda)
    assert Host.here() == Host(cuda=cuda)
    assert target.targets() == [SIMULATED, *(Target(f"cuda:{i}", devices=cuda) for i in range(cuda))]
    assert target.page() == (Target("cuda:0", devices=cuda) if cuda else SIMULATED)


def test_each_kind_of_target():
    assert [str(t) for t in target.targets(PROFILES["two GPUs"])] == ["simulated", "cuda:0", "cuda:1"]
    assert [t.kind for t in target.targets(PROFILES["two GPUs"])] == ["simulated", "cuda2", "cuda2"]
    assert [t.kind for t in target.targets(PROFILES["one GPU"])] == ["simulated", "cuda"]
    assert [str(t) for t in target.targets(PROFILES["mac"])] == ["simulated", "mps"]
    assert target.page(PROFILES["mac"]) == Target("mps") and Target("mps").tensor_device == "mps:0"
    assert SIMULATED.label == "fake cuda:0" and Target("cuda:1").label == "cuda:1"


def test_the_page_target_of_each_scenario_on_each_host():
    sc = scenarios.get
    for name, host in PROFILES.items():
        page = target.page(host)
        assert page.simulated is (host == Host())
        assert target.for_scenario(sc("dtype-mismatch"), host=host) == page  # no GPU involved: the host as it is
        inputs = target.for_scenario(sc("inputs-on-cpu"), host=host)
        assert inputs == page and inputs.stand_in == ("fake" if page.simulated else None), name
    # .cuda() among .to(device): two GPUs, simulated with two fake ones where fewer are present
    mixed = [target.for_scenario(sc("cuda-mixed-to"), host=h) for h in PROFILES.values()]
    assert [(t.device, t.simulated, t.kind) for t in mixed] == [
        ("cuda:1", True, "simulated"), ("cuda:1", True, "simulated"), ("cuda:1", False, "cuda2"),
        ("cuda:1", True, "simulated"), ("cuda:1", False, "cuda2")]
    assert all(t.devices >= 2 for t in mixed)
    # meta stands in where it is the honest second device; DataParallel is CUDA-only
    assert target.for_scenario(sc("numpy-on-gpu"), host=Host()) == Target("meta", True, "meta")
    assert target.for_scenario(sc("numpy-on-gpu"), host=PROFILES["mac"]) == Target("mps")
    assert target.for_scenario(sc("dataparallel-not-moved"), host=PROFILES["mac"]).simulated
    # and a two-GPU one: with one GPU its constructor moves the module itself (simulated there, as two GPUs)
    assert target.for_scenario(sc("dataparallel-not-moved"), host=PROFILES["one GPU"]).simulated
    dp = target.for_scenario(sc("dataparallel-not-moved"), host=PROFILES["two GPUs"])
    assert not dp.simulated and dp.kind == "cuda2"


@pytest.mark.parametrize("name", PROFILES)
def test_every_scenario_has_an_expectation_on_every_target_the_suite_would_run(name):
    host = PROFILES[name]
    ran = set()
    for t in target.targets(host):
        for sid, sc in scenarios.SCENARIOS.items():
            on = target.for_scenario(sc, t, host)
            assert on.kind in target.KINDS, (sid, on)
            assert sc.expected(on.kind) is not None, (name, str(t), sid, on.kind)
            ran.add((sid, on.kind))
            if sc.needs_gpu:  # a GPU mistake runs for real exactly where its kind and its device count are present
                count = host.cuda if t.kind.startswith("cuda") else 1
                real = not t.simulated and t.kind.rstrip("2") in sc.real_on and count >= sc.devices
                assert on.simulated is not real, (name, sid, str(t))
    assert {kind for _, kind in ran} == {t.kind for t in target.targets(host)}


def test_gpu_scenarios_declare_the_simulated_form_and_each_real_kind_they_run_on():
    for sid, sc in scenarios.SCENARIOS.items():
        kinds = set(sc.expect)
        if not sc.needs_gpu:
            assert kinds == {"*"} or "simulated" not in kinds, sid  # no GPU side: one outcome for every host
            continue
        real = {("cuda2" if k == "cuda" and sc.devices == 2 else k) for k in sc.real_on}
        assert "*" not in kinds and kinds == {"simulated"} | real, (sid, kinds, real)
        assert sc.stand_in in ("fake", "meta")


def test_silent_mistakes_expect_nothing_raised_and_the_others_an_exception():
    for sid, sc in scenarios.SCENARIOS.items():
        # a simulation that can only show the real device's words raises nothing; its real device does
        outcomes = [o for k, o in sc.expect.items() if not (sc.wording_only and k == "simulated")]
        assert all((o.raises is None) is sc.silent for o in outcomes), sid
        if sc.wording_only:
            assert sc.expect["simulated"].raises is None and not sc.silent, sid
        assert all(o.pattern or o.warning or o.raises is None for o in outcomes), sid


def host_truths(path) -> list[str]:
    """Where a test asks torch what devices this machine has (`torch.cuda.is_available()`, `device_count()`,
    `mps.is_available()`) or reads a `GPU` flag: a truth about the host, that holds here and not on another."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        asks = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("is_available", "device_count")
                and ast.unparse(node.func.value).split(".")[-1] in ("cuda", "mps"))
        if asks or (isinstance(node, ast.Name) and node.id == "GPU"):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_lab_web_or_hw_test_hard_codes_a_host_truth():
    found = [hit for folder in ("lab", "web", "hw") for path in sorted((ROOT / "tests" / folder).rglob("*.py"))
             for hit in host_truths(path)]
    assert found == []


@pytest.mark.slow
@pytest.mark.parametrize("cuda", [1, 2])
def test_a_gpu_checkpoint_fails_live_as_on_a_host_with_one_or_two_gpus(monkeypatch, cuda):
    """With torch reporting `cuda` GPUs, the lab records the checkpoint one past the last GPU, and
    torch.load's own check refuses it in its GPU-host wording, which the scenario's data must expect."""
    looks_like(monkeypatch, cuda)
    t = Target("cuda:0", devices=cuda)
    for sid in ("cuda-checkpoint", "optimizer-state-from-gpu"):
        sc = scenarios.get(sid)
        r = harness.run(sc, target=t)
        assert r.raised and f"on CUDA device {cuda} but torch.cuda.device_count() is {cuda}" in r.error_message
        assert sc.expected(t.kind).problems(r.raised, r.error_type, r.error_bases, r.error_message, r.warnings) == []
    assert harness.run(scenarios.get("cuda-checkpoint"), target=t).measured["storage_locations_in_file"] == [
        f"cuda:{cuda}"]
