"""`python -m playground gpu-run OUT_DIR`: the prepared GPU run. Each step in a process of its own under its time
budget, one failing or hanging step never stopping the others, every result (or error) in OUT_DIR; rehearsed
here end to end, its CPU parts run and its GPU parts skipped with their reason."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from playground.core.i18n import said
from playground.tools import gpurun
from tests.bare_env import bare_venv
from tests.conftest import ROOT, present
from tests.tools.test_selfcheck import gpu_doc_section

WRITE = ("import json, pathlib, sys; out = pathlib.Path(sys.argv[1]); "
         "(out / 'steps' / '{name}.json').write_text(json.dumps({{'status': '{status}', 'result': {{'n': 1}}}}))")


@dataclass(frozen=True)
class ScriptStep(gpurun.Step):
    """A step whose process runs a short script instead of a real step (the run's own handling is what is tested)."""

    script: str = ""

    def command(self, out):
        return [sys.executable, "-c", self.script.format(name=self.name), str(out)]


STEPS = (
    ScriptStep("first", 20, True, "-", WRITE.replace("{status}", "ok")),
    ScriptStep("crashes", 20, True, "-", "import sys; print('boom'); sys.exit(3)"),
    ScriptStep("hangs", 2, True, "-", "import time; time.sleep(60)"),
    ScriptStep("gpu_only", 20, False, "-", "raise SystemExit('never started without a GPU')"),
    ScriptStep("after", 20, True, "-", WRITE.replace("{status}", "ok")),
)


@pytest.mark.slow
def test_each_step_is_isolated_timed_and_recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(gpurun, "gpu_here", lambda: said("dev.no_cuda_device"))  # a machine without a GPU, as data
    t0 = time.perf_counter()
    doc = gpurun.run(tmp_path, budget=60, steps=STEPS, log=lambda line: None)
    assert time.perf_counter() - t0 < 30  # the hanging step was stopped at its 2 s
    steps = doc["steps"]
    assert [steps[n]["status"] for n in ("first", "crashes", "hangs", "gpu_only", "after")] == [
        "ok", "error", "timeout", "skipped", "ok"]
    assert "exited with status 3" in steps["crashes"]["error"] and "boom" in steps["crashes"]["error"]
    assert steps["hangs"]["budget_seconds"] == 2 and "stopped after 2 s" in steps["hangs"]["reason"]
    assert "needs a CUDA GPU: no CUDA device visible" in steps["gpu_only"]["reason"] and steps["gpu_only"]["reason_zh"]
    assert steps["after"]["result"] == {"n": 1}  # the run went on past the failures
    assert doc["ok"] is False and doc["findings"] == ["crashes: error", "hangs: timeout"]
    assert json.loads((tmp_path / "gpu-run.json").read_text()) == json.loads(json.dumps(doc, default=str))
    assert (tmp_path / "logs" / "crashes.log").read_text().strip() == "boom"
    assert not (tmp_path / "work").exists()  # the synthetic checkpoints' folder is removed at the end


def test_a_spent_budget_skips_the_remaining_steps_saying_so(tmp_path, monkeypatch):
    monkeypatch.setattr(gpurun, "gpu_here", lambda: None)
    doc = gpurun.run(tmp_path, budget=gpurun.RESERVE + 4, steps=STEPS[:1], log=lambda line: None)
    assert doc["steps"]["first"]["status"] == "skipped" and "were spent" in doc["steps"]["first"]["reason"]


@pytest.mark.parametrize("args, message", [
    (["--only", "h2d,warp"], "--only takes steps among load_vs_to, h2d, straight_vs_move"),
    (["--budget", "5"], "--budget must be a number of seconds from 30 to 3600"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, capsys, args, message):
    from playground.tools import cli

    assert cli.main(["gpu-run", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """`python -m playground gpu-run OUT` run once, where the GPU machine's image runs it: a virtual environment
    with every package of this one but gradio, gradio_client and pandas (tests/bare_env.py). The run and its
    folder; two tests read it (the whole run is about 2 minutes here, its self-check most of it)."""
    tmp = tmp_path_factory.mktemp("gpu-run")
    python = bare_venv(tmp / "venv")
    env = {k: v for k, v in os.environ.items() if k != "PLAYGROUND_REQUIRE_BROWSER"}  # .ci/run's; not a GPU image's
    proc = subprocess.run([str(python), "-m", "playground", "gpu-run", str(tmp / "out")], cwd=ROOT,
                          capture_output=True, env=env, text=True, timeout=600)
    return proc, tmp / "out"


@pytest.mark.slow
def test_the_prepared_run_rehearses_here_its_gpu_steps_skipped_with_their_reason(rehearsal):
    """Every step with a CPU part runs, every GPU-only step is skipped saying why; the self-check collects, runs
    the device tests, and skips the web layer's folders (absent from this environment) saying why."""
    proc, out = rehearsal
    assert proc.stdout.strip(), proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    print(f"\ngpu-run here: {doc['wall_seconds']:.0f} s; " + ", ".join(
        f"{n} {s['status']} {s.get('seconds', 0):.0f} s" for n, s in doc["steps"].items()))
    assert list(doc) == ["command", "started", "budget_seconds", "environment", "steps", "findings", "ok",
                         "wall_seconds"]
    steps = doc["steps"]
    assert list(steps) == [s.name for s in gpurun.STEPS]
    gpu = doc["environment"]["cuda_devices"] > 0
    for s in gpurun.STEPS:
        entry = steps[s.name]
        if gpu or s.cpu_part:
            assert entry["status"] == "ok", (s.name, entry.get("error"))
        else:
            assert entry["status"] == "skipped" and entry["reason"].startswith("needs a CUDA GPU: "), entry
    assert proc.returncode == 0 and doc["ok"] and doc["findings"] == [], (doc["findings"], proc.stderr[-2000:])
    assert doc["environment"]["versions"]["gradio"] is None
    check = json.loads((out / "selfcheck.json").read_text())
    assert check["failed"] == 0 and steps["selfcheck"]["result"]["passed"] == check["passed"] >= 30
    skipped = {c["test"]: c["reason"] for c in check["checks"] if c["status"] == "skip"}
    for folder in ("tests/web", "tests/e2e"):
        assert "needs the web layer: gradio and gradio_client not installed" in skipped[folder], skipped
    ran = {c["name"] for c in check["checks"] if c["status"] == "pass"}
    assert {"test_each_scenario_does_live_what_its_data_expects", "test_load_puts_every_tensor_on_the_device"} <= ran
    decode = steps["ledger_decode"]["result"]
    assert decode["new_tokens"] > 0 and 0 < decode["percent_of_bound"] <= 100
    assert {p["part"] for p in decode["after_load"]} >= {"runtime", "weights", "unaccounted"}
    assert steps["straight_vs_move"]["result"]["same_weights"]
    tiers = steps["placement"]["result"]["placement"]["by_tier"]
    assert tiers.get("disk", 0) > 0 and sum(tiers.values()) > 0
    half = steps["half_precision"]["result"]
    assert half["rows"] and all(r["runs"] and all(x["new_tokens"] == half["new_tokens"] for x in r["runs"])
                                for r in half["rows"]), half["rows"]
    assert half["profiles"]["float32"]["by_host"], half["profiles"]
    rows = {r["pair"]: r for m in steps["dtypes"]["result"]["models"] for r in m["rows"]}
    assert rows["cpu/int8"]["status"] == "ok" and rows["cpu/int8"]["agree_compared"] > 0, rows
    quant = rows["cpu/int8"]["quantized"]  # which weight matrices became int8, which were skipped and why
    assert quant["quantized"] + sum(s["count"] for s in quant["skipped"]) > 0 and rows["cpu/float32"]["quantized"] is None
    assert not (out / "work").exists()


@pytest.mark.slow
def test_the_self_check_on_this_machine_gives_each_device_test_a_verdict_and_its_figures(rehearsal):
    """The rehearsal's self-check (the same `selfcheck.run` as `python -m playground selfcheck --json`; the web
    layer's folders hold no device test): every check's fields, every skip's reason, the figures, the docs."""
    _, out = rehearsal
    r = json.loads((out / "selfcheck.json").read_text())
    print("\n" + "\n".join(f"{c['name']:<60} {c['device']:<6} {c['status']:<5} {c['seconds']:6.1f} s  {c['reason']}"
                           for c in r["checks"]))
    assert r["failed"] == 0 and r["ok"] and r["passed"] >= 9
    assert r["passed"] + r["skipped"] == len(r["checks"])
    for c in r["checks"]:
        assert {"name", "status", "reason", "device", "proves", "seconds", "test"} <= set(c)
        assert (c["status"] == "skip") == bool(c["reason"])  # every skip says why, a pass has nothing to explain
        if c["device"] not in (*present(), "auto"):  # a device this machine lacks: never a pass
            assert c["status"] == "skip" and "not available here" in c["reason"]
    by = {(c["name"], c["device"]): c for c in r["checks"]}
    # the figures each pass measured
    assert by[("test_kv_growth_reads_the_real_cache_within_2_percent_of_the_estimate", "cpu")]["max_error"] <= 0.02
    assert by[("test_load_puts_every_tensor_on_the_device", "cpu")]["weights_bytes"] > 0
    assert by[("test_survey_measures_the_host_and_says_why_a_gpu_kind_is_absent", "cpu")]["read_gbps"] > 0
    # docs/gpu.md's table names every device test (or the folder of a family of them, as `tests/lab/`)
    section = gpu_doc_section()
    folders = re.findall(r"`(tests/[\w/]+/)`", section)
    tests = [c for c in r["checks"] if "::" in c["test"]]  # not a folder skipped whole (tests/web: no gradio there)
    missing = {c["name"] for c in tests
               if f"`{c['name']}`" not in section and not any(c["test"].startswith(f) for f in folders)}
    assert missing == set()


def test_a_fix_that_fails_on_the_gpu_is_a_finding():
    """The H200's run of 2026-11-28 had one scenario whose fix failed on the GPU host while the run said ok: a fix
    that does not run as written is a finding, named with its scenario."""
    entry = {"status": "ok", "result": {"target": "cuda:0", "not_as_expected": [], "fix_failed": ["offloaded-moved"]}}
    assert gpurun.findings("break_it", entry) == ["break_it: the fix failed on cuda:0: offloaded-moved"]
    entry["result"]["fix_failed"] = []
    assert gpurun.findings("break_it", entry) == []
