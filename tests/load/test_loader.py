"""Loading in timed phases: the report's facts, the dtype and device choices, refusals before the unload."""

import dataclasses
import time

import pytest
import torch

from playground.core.errors import UserError
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.hw import census, devices
from playground.load import loader
from tests.conftest import load, present


def test_hub_id_without_network_fails_fast(monkeypatch):
    from huggingface_hub import constants

    # Point the Hub at a closed local port: the same as no network, deterministic.
    monkeypatch.setattr(constants, "ENDPOINT", "https://127.0.0.1:9")
    t0 = time.perf_counter()
    with pytest.raises(UserError) as e:
        load("playground-test/not-cached-model", "cpu", "float32")
    assert time.perf_counter() - t0 < 5
    assert BUNDLED_NAME in str(e.value) and "unreachable" in str(e.value)


def test_real_hub_id_here_fails_fast_or_is_not_found():
    # On these machines there is no network: the real path must answer quickly too.
    t0 = time.perf_counter()
    with pytest.raises(UserError) as e:
        load("playground-test/not-a-real-model-x9", "cpu", "float32")
    assert time.perf_counter() - t0 < 10
    msg = str(e.value)
    assert BUNDLED_NAME in msg or "not found" in msg


def test_load_bundled_float32_phases(bundled):
    r = bundled.report
    assert [p.name for p in r.phases] == ["import", "estimate", "tokenizer", "load", "migrate", "eval"]
    assert r.import_seconds >= 0
    n = sum(p.numel() for p in bundled.model.parameters())
    assert r.param_count == n and 3_000_000 <= n <= 6_000_000
    assert r.weights_bytes == n * 4  # float32, no buffers, tied head counted once
    assert r.load_seconds > 0 and r.migrate_seconds >= 0
    assert "no-op" in r.migrate_note.text("en")  # cpu -> cpu copies nothing
    assert "空操作" in r.migrate_note.text("zh") and r.to_dict()["migrate_note"].startswith("no-op")
    assert r.disk_bytes == (BUNDLED_DIR / "model.safetensors").stat().st_size
    assert r.ram["rss_before"] > 0 and r.ram["rss_after"] > 0
    assert not bundled.model.training  # eval() ran
    # float32 checkpoint, float32 on cpu: the weights stay mapped from the file (zero copy)
    assert r.file_backed_bytes == r.weights_bytes
    if not torch.cuda.is_available():
        assert r.vram["available"] is False and r.vram["reason"].text("en")
        assert r.to_dict()["vram"]["reason"] == r.vram["reason"].text("en")  # the API says it in English


def test_a_migration_that_copies_is_reported_as_copied_and_timed(monkeypatch):
    """`.to("cpu")` is a no-op here, so the loader's "copied" branch needs a device that really copies: the meta
    device runs Module.to's copy path (new parameter objects, shapes and dtypes, no data). The loader's own
    migrate step, given meta as a test's device (never a visitor's), must say "copied", from where to where,
    and time the `.to()` it ran: a 50 ms pause inside that `.to()` must show in the phase."""
    with pytest.raises(UserError):
        devices.parse_device("meta")  # not selectable from the page or the API
    meta = devices.DeviceInfo(id="meta", kind="meta", available=True, name="meta")
    plan = dataclasses.replace(loader.prepare(*loader.parse(BUNDLED_NAME, "cpu", "float32")), device=meta)
    real_to, calls = torch.nn.Module.to, []

    def to_with_a_pause(self, *args, **kwargs):
        if args[:1] != ("meta",):
            return real_to(self, *args, **kwargs)
        before = next(self.parameters())
        time.sleep(0.05)
        moved = real_to(self, *args, **kwargs)
        calls.append((before, next(moved.parameters())))
        return moved

    monkeypatch.setattr(torch.nn.Module, "to", to_with_a_pause)
    lm = loader.load(plan)
    r = lm.report
    assert len(calls) == 1 and calls[0][1] is not calls[0][0] and calls[0][1].device.type == "meta"  # copied
    # the bundled float32 weights were still mapped from the checkpoint when the move began (the gap names them)
    assert r.migrate_code == "copied" and r.migrate_fields.keys() == {"src", "dst", "mapped_bytes"}
    assert (r.migrate_fields["src"], r.migrate_fields["dst"]) == ("cpu", "meta")
    assert 0.5 * r.weights_bytes < r.migrate_fields["mapped_bytes"] <= r.weights_bytes
    assert r.migrate_note.text("en") == "copied every parameter and buffer from cpu to meta and repointed the module at them."
    assert "cpu" in r.migrate_note.text("zh") and "meta" in r.migrate_note.text("zh")
    migrate = next(p for p in r.phases if p.name == "migrate")
    assert migrate.seconds == r.migrate_seconds and 0.05 <= migrate.seconds < 5
    assert migrate.note.key == "note.migrate.copied" and lm.device == "meta"
    assert {p.device.type for p in lm.model.parameters()} == {"meta"}


def test_load_bfloat16_halves_weight_bytes(bundled):
    lm = load(BUNDLED_NAME, "cpu", "bfloat16")
    assert lm.report.dtype == "bfloat16"
    assert lm.report.weights_bytes * 2 == bundled.report.weights_bytes
    assert all(p.dtype == torch.bfloat16 for p in lm.model.parameters())


def test_auto_dtype_keeps_checkpoint_dtype():
    lm = load(BUNDLED_NAME, "cpu", "auto")
    assert lm.report.dtype == "float32" and "checkpoint" in lm.report.dtype_reason.text("en")


# What model.to(device) does after from_pretrained has built the model on the CPU: data, by kind of device.
MIGRATION = {"cpu": "noop", "cuda": "copied", "mps": "copied"}


def not_on(model: torch.nn.Module, device: str) -> list[str]:
    """Names of the parameters and buffers NOT on `device` (empty: all there)."""
    want = torch.device(device)
    return [n for n, t in [*model.named_parameters(), *model.named_buffers()]
            if t.device.type != want.type or (want.index is not None and t.device.index != want.index)]


@pytest.mark.device
def test_load_puts_every_tensor_on_the_device(device, pool, figures):
    """A load in timed phases through the pool, then `model.to(device)` timed with the device synchronised
    on both sides: every parameter and buffer ends on the device (a copy to a GPU, a no-op on the CPU); the
    weight bytes are the sum of numel x element size."""
    r = pool.load(*loader.parse(BUNDLED_NAME, device, "float32"))
    with pool.held() as lm:
        off, weights = not_on(lm.model, device), census.weights_bytes(lm.model)
    figures.update(load_seconds=r.load_seconds, migrate_seconds=r.migrate_seconds, weights_bytes=r.weights_bytes,
                   params=r.param_count, migrate=r.migrate_code,
                   migrate_gbps=r.weights_bytes / r.migrate_seconds / 1e9 if r.migrate_code == "copied" else None)
    assert off == []
    assert weights == r.weights_bytes
    assert r.migrate_code == MIGRATION[device.split(":")[0]]


@pytest.mark.device(kinds=("auto",))
def test_auto_device_reports_placement(device, pool, figures):
    """`device_map="auto"` places every layer (Accelerate's plan), on the GPUs first: all on the CPU on a host
    without one; `hf_device_map` and hooks only when the layers span devices."""
    r = pool.load(*loader.parse(BUNDLED_NAME, device, "float32"))
    where = r.location
    figures.update(location=where.to_dict(), hf_device_map=r.hf_device_map)
    assert r.migrate_seconds == 0.0 and "device_map" in r.migrate_note.text("en")
    assert where.asked == "auto" and where.weights_bytes == r.weights_bytes
    first = [d for d in present() if d.startswith("cuda")] or ["cpu"]  # where Accelerate puts layers first
    tiers = {t.name for t in where.tiers}
    assert tiers <= set(present()) and tiers & set(first) and where.runs_on in first
    spans = len(tiers) > 1
    assert (r.hf_device_map is not None) == spans and r.migrate_code == ("auto_hooks" if spans else "auto_single")


def test_trust_remote_code_is_never_enabled(monkeypatch):
    seen = []
    import transformers

    real = transformers.AutoModelForCausalLM.from_pretrained

    def spy(*a, **kw):
        seen.append(kw.get("trust_remote_code"))
        return real(*a, **kw)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", spy)
    load(BUNDLED_NAME, "cpu", "float32")
    assert seen == [False]


def test_the_api_dict_says_every_fact_in_english(bundled):
    d = bundled.report.to_dict()
    assert d["dtype_reason"].startswith("asked for float32") and d["label"] == "" and d["hint"] == ""
    assert [p["name"] for p in d["phases"]] == ["import", "estimate", "tokenizer", "load", "migrate", "eval"]
    assert all(isinstance(p["note"], str) for p in d["phases"])
    assert d["phases"][1]["note"].startswith("built on the meta device")


def test_a_synthetic_model_carries_its_label_in_both_languages():
    lm = load("synthetic/gpt2-small", "cpu", "bfloat16")
    assert "random weights" in lm.report.label.text("en") and "随机权重" in lm.report.label.text("zh")
    assert lm.report.hint is not None and "bfloat16" in lm.report.hint.text("en")
