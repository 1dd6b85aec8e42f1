"""A load's phases tell the truth: the architecture's import is the import phase (not the estimate's), the model
loaded before is unloaded in a phase of its own, the memory timeline and the report agree on every phase's
duration, and the dtype sentence says what happened to the weights."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from playground.core.paths import BUNDLED_NAME
from playground.load import loader
from playground.run.pool import ModelPool
from tests.conftest import ROOT

GPT2_CODE = "transformers.models.gpt2.modeling_gpt2"

# A fresh process loads the bundled model, noting at each progress line whether GPT-2's modelling code is imported.
COLD = f"""
import json, sys
from playground.load import loader
seen = []
def progress(frac, desc):
    seen.append((getattr(desc, "said", None) and desc.said.key, {GPT2_CODE!r} in sys.modules))
lm = loader.load(loader.prepare(*loader.parse({BUNDLED_NAME!r}, "cpu", "float32"), progress=progress))
print(json.dumps(dict(seen=seen, phases={{p.name: p.seconds for p in lm.report.phases}})))
"""


@pytest.mark.slow
def test_a_cold_process_bills_the_architectures_import_to_the_import_phase():
    """In a fresh process the meta-device estimate would import GPT-2's code (a second here) and bill it to
    "checking it fits": the import phase runs first and carries it, and the estimate builds on code already in."""
    out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    imported_at = dict(got["seen"])
    assert imported_at["progress.import"] is False  # not imported before the import phase began
    assert imported_at["progress.estimate"] is True  # ... and imported by the time the estimate starts
    phases = got["phases"]
    assert list(phases)[:2] == ["import", "estimate"]
    assert phases["estimate"] < phases["import"], phases


def _second_load(pool: ModelPool):
    """bfloat16 first (its weights are copies, held in RAM), then float32: the second load unloads the first."""
    pool.load(*loader.parse(BUNDLED_NAME, "cpu", "bfloat16"))
    return pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))


def test_the_model_loaded_before_is_unloaded_in_a_phase_of_its_own(pool):
    first = pool.load(*loader.parse(BUNDLED_NAME, "cpu", "bfloat16"))
    assert "unload" not in [p.name for p in first.phases]  # nothing was loaded before: nothing to unload
    r = pool.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))
    names = [p.name for p in r.phases]
    assert names == ["import", "estimate", "tokenizer", "unload", "load", "migrate", "eval"]
    unload = r.phases[3]
    assert unload.note.key == "phase.unload" and unload.note.fields["model"] == BUNDLED_NAME
    assert "卸载" in slot_phase_names(r, "zh")
    # the 10 MiB of bfloat16 copies are given back inside the unload, not inside the estimate
    estimate = r.phases[1]
    rss = {p.name: (p.rss_before, p.rss_after) for p in r.phases}
    threads = [t.name for t in threading.enumerate()]  # another test's thread allocating meanwhile moves RSS too
    assert unload.rss_before - unload.rss_after > 0.5 * first.weights_bytes, (first.weights_bytes, rss, threads)
    assert estimate.rss_after - estimate.rss_before > -0.1 * first.weights_bytes, (first.weights_bytes, rss, threads)
    spans = [sp.name for sp in pool._holds[""].load_timeline.spans]
    assert spans == ["import", "estimate", "tokenizer", "unload", "load", "migrate", "eval"]


def slot_phase_names(report, lang: str) -> str:
    from playground.run.render import report_markdown

    return report_markdown(report, lang)


def test_the_timeline_and_the_report_agree_on_every_phase(pool):
    """Each phase's duration on the memory timeline (sampled at 15 Hz, marked from the loader's progress lines)
    is the report's to within one sampler tick: nothing runs between the phases unaccounted."""
    r = _second_load(pool)
    sampler = pool._holds[""].load_timeline
    on_timeline: dict[str, float] = {}
    for sp in sampler.spans:
        on_timeline[sp.name] = on_timeline.get(sp.name, 0.0) + (sp.end - sp.start)
    tick = 1 / sampler.hz
    for p in r.phases:
        assert abs(on_timeline[p.name] - p.seconds) <= tick, (p.name, on_timeline[p.name], p.seconds)
    assert set(on_timeline) == {p.name for p in r.phases}


def test_the_dtype_sentence_says_whether_the_weights_were_cast(bundled):
    kept = bundled.report.dtype_reason
    assert kept.key == "note.dtype.mapped"  # float32 from a float32 checkpoint: mapped, never cast
    en = kept.text("en")
    assert "no cast" in en and "mapped from the file" in en and "cast the weights" not in en
    assert "没有转换" in kept.text("zh")
    cast = loader.load(loader.prepare(*loader.parse(BUNDLED_NAME, "cpu", "bfloat16"))).report
    assert cast.dtype_reason.key == "note.dtype.cast" and cast.file_backed_bytes == 0
    assert "from a float32 checkpoint" in cast.dtype_reason.text("en") and "cast" in cast.dtype_reason.text("en")
    assert "转换了权重" in cast.dtype_reason.text("zh")
