"""What an offloaded model moves per token, counted through Accelerate's own hooks (left unchanged) and the
process's I/O counters, on a private copy of the bundled model (so that no other mapping keeps it cached)."""

from __future__ import annotations

import tempfile

import pytest
import torch
from accelerate.hooks import AlignDevicesHook
from transformers import AutoModelForCausalLM, AutoTokenizer

from playground.hw import disk
from playground.load import placemap
from playground.run import offload

LAST_TWO_OFF = {"transformer.wte": "cpu", "lm_head": "cpu", "transformer.wpe": "cpu", "transformer.drop": "cpu",
                "transformer.h.0": "cpu", "transformer.h.1": "cpu", "transformer.h.2": "disk", "transformer.h.3": "disk",
                "transformer.ln_f": "cpu"}


@pytest.fixture
def placed(private_checkpoint):
    model = AutoModelForCausalLM.from_pretrained(private_checkpoint, device_map=LAST_TWO_OFF,
                                                 offload_folder=tempfile.mkdtemp()).eval()
    return model, AutoTokenizer.from_pretrained(private_checkpoint)


def _block_bytes(model, names) -> int:
    return sum(p.numel() * p.element_size() for n in names for p in model.get_submodule(n).parameters())


def test_the_hooks_bring_in_exactly_the_offloaded_blocks_every_token_and_are_left_as_they_were(placed, one_thread):
    model, tok = placed
    hooks = [m._hf_hook for m in model.modules() if isinstance(getattr(m, "_hf_hook", None), AlignDevicesHook)]
    offload.measure(model, tok, "cpu", "ROMEO:", 2)
    run = offload.measure(model, tok, "cpu", "ROMEO:", 8)
    assert run.new_tokens == 8 and run.decode_passes == 7 and len(run.token_ids) == 8
    assert run.moved_bytes_per_token == _block_bytes(model, ("transformer.h.2", "transformer.h.3")) > 0
    assert run.copied_bytes_per_token == 0  # float32 from safetensors: mapped from the checkpoint, not copied
    assert run.hook_ms_per_token > 0 and run.tokens_per_second > 0 and run.evict_ms_per_token == 0
    assert not any("pre_forward" in vars(h) or "post_forward" in vars(h) for h in hooks)  # the class's methods again


def test_greedy_tokens_equal_the_all_in_ram_run(placed, private_checkpoint, one_thread):
    model, tok = placed
    ram = AutoModelForCausalLM.from_pretrained(private_checkpoint).eval()
    assert offload.measure(model, tok, "cpu", "ROMEO:", 12).token_ids == offload.measure(ram, tok, "cpu", "ROMEO:", 12).token_ids


@pytest.mark.skipif(not disk.can_evict(), reason="this OS has no posix_fadvise (no page cache to drop)")
def test_a_cold_run_reads_the_offloaded_bytes_from_the_disk_every_token(placed, one_thread):
    model, tok = placed
    files = {f for f, _, _ in placemap.offloaded_ranges(model)}
    offload.measure(model, tok, "cpu", "ROMEO:", 2)
    warm = offload.measure(model, tok, "cpu", "ROMEO:", 8)
    cold = offload.measure(model, tok, "cpu", "ROMEO:", 8, cold=True, files=files)
    if cold.disk_bytes_per_token is None:
        pytest.skip("this OS keeps no count of the bytes a process reads from storage")
    assert cold.disk_bytes_per_token >= 0.9 * cold.moved_bytes_per_token  # read again, each token
    assert warm.disk_bytes_per_token < 0.1 * warm.moved_bytes_per_token  # served by the page cache
    assert cold.evict_ms_per_token > 0 and cold.token_ids == warm.token_ids


def test_a_cast_on_the_way_in_is_a_copy(private_checkpoint, one_thread):
    model = AutoModelForCausalLM.from_pretrained(private_checkpoint, device_map=LAST_TWO_OFF, dtype=torch.bfloat16,
                                                 offload_folder=tempfile.mkdtemp()).eval()
    run = offload.measure(model, AutoTokenizer.from_pretrained(private_checkpoint), "cpu", "ROMEO:", 4)
    assert run.copied_bytes_per_token == run.moved_bytes_per_token == _block_bytes(model, ("transformer.h.2", "transformer.h.3"))


def test_first_difference():
    assert offload.first_difference([1, 2, 3], [1, 2, 3]) is None
    assert offload.first_difference([1, 5, 3], [1, 2, 3]) == 1 and offload.first_difference([1, 2], [1, 2, 3]) == 2
