"""The lab on the versions a GPU box may have instead of the pinned ones (torch 2.11, Transformers 5.17).

Each older version is data: its recorded source line or return shape, fed through the playground's own
code path by monkeypatching the installed library, never a branch in a test. torch 2.11's FakeTensor
has no FakeTensorDeviceMismatchError and words a device mismatch its own way (a plain RuntimeError);
the lab must import there, read the wording it expects from the installed torch, and know the message.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from types import SimpleNamespace

import pytest
import torch._subclasses.fake_tensor as ft
import transformers
from transformers.generation.utils import GenerationMixin

from playground.lab import gpu_wording, harness, outcome, scenarios
from playground.lab.diagnose import diagnose

# torch 2.11's torch/_subclasses/fake_tensor.py, in FakeTensor._find_common_device's merge_devices, where an
# operator meets two devices (recorded from its source; 2.13 raises FakeTensorDeviceMismatchError there instead)
TORCH_2_11_RAISE = '''
            raise RuntimeError(
                f"Unhandled FakeTensor Device Propagation for {func}, found two different devices {common_device}, {t.device}"
            )
'''


@pytest.fixture
def torch_2_11(monkeypatch, tmp_path):
    """This torch with torch 2.11's FakeTensor device check: the class gone, the recorded raise run where 2.13
    raises (fake_tensor.py looks the class up by name as it raises) and read where the lab reads the source."""
    source = textwrap.dedent(TORCH_2_11_RAISE)
    (tmp_path / "fake_tensor.py").write_text(source, encoding="utf-8")
    raise_211 = compile(ast.Expression(ast.parse(source).body[0].exc), "fake_tensor.py (torch 2.11)", "eval")

    def as_in_2_11(func, common_device, device):
        return eval(raise_211, {"func": func, "common_device": common_device, "t": SimpleNamespace(device=device)})

    monkeypatch.setattr(ft, "FakeTensorDeviceMismatchError", as_in_2_11)
    monkeypatch.setattr(gpu_wording, "FAKE_TENSOR", tmp_path / "fake_tensor.py")
    gpu_wording.fake_template.cache_clear()
    yield
    gpu_wording.fake_template.cache_clear()


def test_the_lab_imports_on_a_torch_without_FakeTensorDeviceMismatchError(monkeypatch):
    """torch 2.11 has no such class: the lab's harness imported it unconditionally and the lab did not import."""
    monkeypatch.delattr(ft, "FakeTensorDeviceMismatchError")
    spec = importlib.util.spec_from_file_location("harness_on_torch_2_11", harness.__file__)
    fresh = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, fresh)  # a fresh copy of the module, imported here
    spec.loader.exec_module(fresh)
    assert fresh.expect_device_error and fresh.run


def test_the_expected_fake_wording_is_read_from_the_installed_torch(torch_2_11):
    assert gpu_wording.fake_template() == "Unhandled FakeTensor Device Propagation for {}, found two different devices {}, {}"
    message = "Unhandled FakeTensor Device Propagation for aten.embedding.default, found two different devices cuda:0, cpu"
    expected = outcome.GPU_MEETS_CPU["simulated"]
    assert expected.problems(True, "RuntimeError", ["Exception"], message, []) == []
    assert expected.problems(True, "RuntimeError", ["Exception"], message.replace("cpu", "meta"), []) != []


def test_a_fake_mismatch_in_torch_2_11s_words_is_the_mistake_not_a_limit_of_the_simulation(torch_2_11):
    r = harness.run(scenarios.get("inputs-on-cpu"))
    assert r.simulated and r.raised and not r.cannot_run, r.cannot_run
    assert (r.error_type, r.error_message) == (
        "RuntimeError", "Unhandled FakeTensor Device Propagation for aten.embedding.default, found two different "
                        "devices cuda:0, cpu")
    assert scenarios.get("inputs-on-cpu").expected("simulated").problems(
        r.raised, r.error_type, r.error_bases, r.error_message, r.warnings) == []
    assert diagnose(r.diagnose_text()).ids()[0] == "inputs-on-cpu"
    assert r.real_gpu_message.startswith("Expected all tensors to be on the same device, but got index is on cpu")


@pytest.mark.slow  # every fake scenario once: about 20 s
def test_every_fake_scenario_does_what_its_data_expects_with_torch_2_11s_words(torch_2_11):
    from tests.lab.test_scenarios import SHARED_WORDING

    fake = [sid for sid, sc in scenarios.SCENARIOS.items() if sc.needs_gpu and sc.stand_in == "fake"]
    assert len(fake) >= 10
    for sid in fake:
        r = harness.run(scenarios.get(sid))
        expected = scenarios.get(sid).expected("simulated" if r.simulated else "cpu")
        assert not r.cannot_run, (sid, r.cannot_run)
        assert expected.problems(r.raised, r.error_type, r.error_bases, r.error_message, r.warnings) == [], sid
        if r.raised and "FakeTensor" in (r.error_message or ""):
            ids = diagnose(r.diagnose_text()).ids()
            assert sid in (ids if sid in SHARED_WORDING else ids[:1]), (sid, ids, r.error_message)


# Transformers 5.17's GenerationMixin.prepare_inputs_for_generation, as the lab reads it: no line copies the
# forward's inputs to the model's device (5.23's `move_to_device(model_inputs, ...)`). Generation still runs
# through the installed function.
_INSTALLED_PREPARE = GenerationMixin.prepare_inputs_for_generation


def prepare_as_in_5_17(self, *args, **kwargs):
    return _INSTALLED_PREPARE(self, *args, **kwargs)


def test_generate_device_type_says_what_the_installed_transformers_does_after_the_warning(monkeypatch):
    """"Generation succeeds with inputs on cuda and the model on the CPU" holds from Transformers 5.23; on 5.17
    the broken script raises after the warning. The result says which the installed version does, naming it."""
    r = harness.run(scenarios.get("generate-device-type"))
    moves = next(n for n in r.notes if n.key == "scenario.generate-device-type.moves")
    assert f"Transformers {transformers.__version__}, installed here, copies" in moves.text("en")
    assert "move_to_device(model_inputs" in moves.text("en") and "5.17" in moves.text("zh")
    monkeypatch.setattr(GenerationMixin, "prepare_inputs_for_generation", prepare_as_in_5_17)
    r = harness.run(scenarios.get("generate-device-type"))
    stays = next(n for n in r.notes if n.key == "scenario.generate-device-type.stays")
    assert f"Transformers {transformers.__version__}, installed here, does not copy" in stays.text("en")
    assert "index_select" in stays.text("en") and "5.23" in stays.text("zh")
    assert "Stopped at the check" in r.notes[0].text("en") and not r.raised and r.fix_ok
