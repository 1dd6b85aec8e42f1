"""Load straight onto the target vs load then move: both paths timed, with peak RSS, in one run, with the same
weights at the end. On the CPU the question is the dtype's; on a GPU the device's (the self-check's GPU check)."""

from __future__ import annotations

import pytest
import torch

from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR
from playground.hw import devices
from playground.load import straight


def _checked(r: straight.StraightReport, device: str, dtype: str) -> None:
    a, b = r.paths
    assert (a.how, b.how) == (straight.STRAIGHT, straight.THEN_MOVE)
    assert a.move_seconds == 0 and b.move_seconds > 0 and a.load_seconds > 0 and b.load_seconds > 0
    assert all(p.rss_peak >= max(p.rss_before, p.rss_after) and p.samples >= 2 for p in r.paths)
    assert all(p.device.split(":")[0] == device.split(":")[0] and p.dtype == dtype for p in r.paths)
    assert r.same_weights and r.weights_bytes > 0
    d = r.to_dict()
    assert d["paths"][1]["seconds"] == pytest.approx(b.load_seconds + b.move_seconds)


@pytest.mark.slow
@pytest.mark.device(kinds=("cpu",))
def test_on_the_cpu_loading_in_bfloat16_against_float32_then_cast(device, figures):
    r = straight.compare(str(BUNDLED_DIR), "shakespeare-gpt2", devices.parse_device(device), torch.bfloat16)
    _checked(r, "cpu", "bfloat16")
    assert r.form == "dtype" and "dtype=torch.float32).to(torch.bfloat16)" in r.paths[1].code
    assert r.paths[0].vram_peak is None and r.paths[1].file_backed_bytes == 0  # a cast copies every tensor
    figures.update(straight_s=r.paths[0].seconds, then_move_s=r.paths[1].seconds,
                   straight_peak=r.paths[0].peak_delta, then_move_peak=r.paths[1].peak_delta)


@pytest.mark.device(kinds=("cuda", "mps"))
def test_on_a_gpu_device_map_against_to(device, figures):
    """The GPU form: from_pretrained(..., device_map=device) against from_pretrained(...).to(device)."""
    r = straight.compare(str(BUNDLED_DIR), "shakespeare-gpt2", devices.parse_device(device), torch.float32)
    _checked(r, device, "float32")
    assert r.form == "device" and f"device_map={device!r}" in r.paths[0].code
    if device.startswith("cuda"):
        assert all(p.vram_peak and p.vram_peak >= r.weights_bytes for p in r.paths)
    figures.update(straight_s=r.paths[0].seconds, then_move_s=r.paths[1].seconds,
                   straight_peak=r.paths[0].peak_delta, then_move_peak=r.paths[1].peak_delta)


@pytest.mark.parametrize("device, dtype, key", [("cpu", torch.float32, "place.err.straight_cpu"),
                                                ("cpu", "auto", "place.err.straight_cpu"),
                                                ("auto", torch.float32, "place.err.straight_auto")])
def test_a_comparison_of_nothing_is_refused(device, dtype, key):
    with pytest.raises(UserError) as e:
        straight.check(devices.parse_device(device), dtype)
    assert e.value.key == key
