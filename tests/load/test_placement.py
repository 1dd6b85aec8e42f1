"""Placement with memory limits: the plan from config.json alone agrees with where a placed load puts the weights
(read from its tensors), and what cannot work is refused before the loaded model is unloaded."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
import torch

from playground.core.errors import UserError
from playground.core.inputs import GenerationParams, Placement, check_limits
from playground.load import catalog, placemap, placement
from playground.load import loader

# The bundled model in float32 (21.3 MB: wte 8.4 MB, 4 blocks of 3.2 MB): three limit settings, three plans.
SETTINGS = {"cpu=12MB,disk": 4, "cpu=16MB,disk": 3, "cpu=21MB,disk": 2}


def plan_of(model: str, limits: str, dtype=torch.float32):
    return placement.plan(catalog.read_config(catalog.resolve(model)), dtype, check_limits(limits))


@pytest.mark.slow
@pytest.mark.parametrize("limits, blocks_off", SETTINGS.items())
def test_plan_and_actual_agree_block_by_block(pool, limits, blocks_off):
    planned = plan_of("shakespeare-gpt2", limits)
    src, dev, dt = loader.parse("shakespeare-gpt2", "auto", "float32")
    pool.load(src, dev, dt, placement=check_limits(limits))
    with pool.held() as lm:
        found = placemap.read(lm.model, lm.placed, "shakespeare-gpt2", limits, lm.offload_folder)
        devices_seen = {n: {str(p.device) for p in lm.model.get_submodule(n).parameters()} for n in
                        ("transformer.h.0", "transformer.h.3")}
    assert [b.tier for b in planned.blocks] == [b.actual for b in found.blocks] == [b.planned for b in found.blocks]
    assert [b.intended for b in found.blocks] == [b.tier for b in planned.blocks]  # hf_device_map: the same plan
    assert sum(b.tier == "disk" and b.name.startswith("transformer.h.") for b in planned.blocks) == blocks_off
    assert found.differences == 0 and found.offloaded_bytes == planned.offloaded_bytes > 0
    assert devices_seen["transformer.h.3"] == {"meta"}  # read from the tensors: an offloaded weight sits on meta
    disk = [b for b in found.blocks if b.actual == "disk"]
    assert disk and all(b.store == placemap.CHECKPOINT and b.tensor_devices == ["meta"] for b in disk)
    assert found.main_device == "cpu" and found.hops == []  # one execution device: activations never hop


def test_the_plan_names_each_tier_and_where_its_bytes_came_from():
    p = plan_of("shakespeare-gpt2", "cpu=16MB,disk")
    assert p.max_memory == {"cpu": 16 * 10**6} and p.offered_by == {"cpu": "limit"}
    assert p.by_tier == {"cpu": 11809792, "disk": 9479168}  # bytes by Transformers' own accounting (a tied head: 0)
    assert p.largest_block == "transformer.wte" and p.largest_block_bytes == 8192 * 256 * 4
    assert p.blocks[-1].name == "lm_head" and p.blocks[-1].bytes == 0 and p.blocks[-1].tied_to == "transformer.wte"
    assert p.max_memory_arg() == {"cpu": 16 * 10**6}


def test_a_gpu_this_machine_lacks_can_be_planned_not_loaded(pool):
    """cuda:99 exists on no machine: the plan runs from the numbers given; a load is refused, naming it."""
    p = plan_of("shakespeare-gpt2", "cuda:99=14MB,cpu=9MB,disk")
    assert p.main_device == "cuda:99" and "cuda:99" in p.absent
    assert p.by_tier["cuda:99"] > 0 and p.max_memory_arg()["cpu"] == 9 * 10**6 and 99 in p.max_memory_arg()
    src, dev, dt = loader.parse("shakespeare-gpt2", "auto", "float32")
    with pytest.raises(UserError) as e:
        pool.load(src, dev, dt, placement=check_limits("cuda:99=14MB,cpu=8MB,disk"))
    assert e.value.key == "place.err.absent" and "cuda:99" in str(e.value)


def test_a_limit_below_one_block_is_refused_with_that_blocks_size():
    with pytest.raises(UserError) as e:
        plan_of("shakespeare-gpt2", "cpu=5MB,disk")
    assert e.value.key == "place.err.below_block"
    assert "transformer.wte" in str(e.value) and "8.4 MB" in str(e.value)  # 8,388,608 B, rounded up


def test_blocks_with_nowhere_to_go_are_refused_without_the_disk_tier(pool):
    cfg = catalog.read_config(catalog.resolve("shakespeare-gpt2"))
    with pytest.raises(UserError) as e:
        placement.guard(cfg, torch.float32, check_limits("cpu=12MB"))
    assert e.value.key == "place.err.needs_disk" and "5 blocks, 12.1 MiB" in str(e.value)  # h.0-h.3 and ln_f


def _serving(pool) -> None:
    """The model loaded before still answers."""
    assert pool.status()["loaded"] and pool.status()["model"] == "shakespeare-gpt2"
    *_, (text, stats) = list(pool.generate("ROMEO:", GenerationParams(4)))
    assert stats.new_tokens == 4


def test_an_unwritable_offload_folder_is_refused_by_role_and_the_loaded_model_keeps_serving(pool, monkeypatch, tmp_path):
    pool.load(*loader.parse("shakespeare-gpt2", "cpu", "float32"))
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("x")
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_folder))  # the process's temporary folder is a file
    src, dev, dt = loader.parse("shakespeare-gpt2", "auto", "float32")
    with pytest.raises(UserError) as e:
        pool.load(src, dev, dt, placement=check_limits("cpu=12MB,disk"))
    assert e.value.key == "place.err.folder_unwritable"
    assert "offload folder" in str(e.value) and str(tmp_path) not in str(e.value)  # named by its role
    monkeypatch.undo()
    _serving(pool)


def test_a_full_offload_folder_is_refused_and_the_loaded_model_keeps_serving(pool, monkeypatch):
    pool.load(*loader.parse("shakespeare-gpt2", "cpu", "float32"))
    real = shutil.disk_usage
    monkeypatch.setattr(placement.shutil, "disk_usage", lambda p: real(p)._replace(free=1000))
    src, dev, dt = loader.parse("shakespeare-gpt2", "auto", "float32")
    with pytest.raises(UserError) as e:
        pool.load(src, dev, dt, placement=check_limits("cpu=12MB,disk"))
    assert e.value.key == "place.err.folder_full" and "1000 B" in str(e.value)
    assert not [p for p in os.listdir(tempfile.gettempdir()) if p.startswith(placement.OFFLOAD_PREFIX + str(os.getpid()))]
    monkeypatch.undo()
    _serving(pool)


def test_the_offload_folder_lives_with_the_loaded_model_and_goes_with_it(pool):
    src, dev, dt = loader.parse("shakespeare-gpt2", "auto", "float32")
    pool.load(src, dev, dt, placement=check_limits("cpu=12MB,disk"))
    with pool.held() as lm:
        folder = lm.offload_folder
        assert lm.placed.limits == str(check_limits("cpu=12MB,disk"))
    assert folder and os.path.isdir(folder) and os.path.basename(folder).startswith(placement.OFFLOAD_PREFIX)
    assert os.listdir(folder) == []  # safetensors: Accelerate reads the offloaded weights in place
    pool.load(*loader.parse("shakespeare-gpt2", "cpu", "float32"))  # another load unloads it
    assert not os.path.exists(folder)
    with pool.held() as lm:
        assert lm.placed is None and lm.offload_folder is None


def test_offload_folders_of_dead_processes_are_swept_and_this_ones_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"{placement.OFFLOAD_PREFIX}999999-1-abc"  # no process 999999 started at t=1
    dead.mkdir()
    mine = placement.new_folder(0)
    assert placement.sweep() == [dead] and mine.exists()
    assert placement.remove_mine() == [mine] and not mine.exists()


def test_device_maps_for_the_cliff_offload_the_last_blocks():
    model = loader.load(loader.prepare(*loader.parse("shakespeare-gpt2", "cpu", "float32"))).model
    assert placement.unsplittable(model) == 4
    dm = placement.device_map_off(model, 2)
    assert [k for k, v in dm.items() if v == "disk"] == ["transformer.h.2", "transformer.h.3"]
    assert set(placement.device_map_off(model, 0).values()) == {"cpu"}


@pytest.mark.slow
def test_a_placed_model_freed_by_a_failed_load_comes_back_with_its_limits(pool, monkeypatch):
    """A load that fails after the session's model was freed loads that model back: with its limits, not all in RAM."""
    src, dev, dt = loader.parse("shakespeare-gpt2", "auto", "float32")
    pool.load(src, dev, dt, placement=check_limits("cpu=16MB,disk"))
    real = loader.load

    def failing(plan, progress=None):
        if plan.placed is None:
            raise MemoryError("cannot allocate 42 bytes")
        return real(plan, progress) if progress else real(plan)

    monkeypatch.setattr(loader, "load", failing)
    with pytest.raises(UserError, match="MemoryError: cannot allocate 42 bytes"):
        pool.load(*loader.parse("shakespeare-gpt2", "cpu", "bfloat16"))
    with pool.held() as lm:
        assert lm.placed is not None and lm.placed.limits == str(Placement((("cpu", 16 * 10**6),), True))
        assert sum(v == "disk" for v in lm.model.hf_device_map.values()) == 4  # h.1-h.3 and ln_f
