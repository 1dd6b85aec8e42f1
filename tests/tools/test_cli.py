"""`python -m playground report`: one JSON object with every figure, the same figures
the API gives, and one-line errors for bad arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from playground.tools import cli
from playground.tools import report as report_cmd
from tests.conftest import ROOT  # noqa: E402

MAX_NEW = 16


def run_cli(*args: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, **(env or {})))


@pytest.fixture(scope="module")
def report() -> dict:
    """The report, run once as a learner would run it: a fresh process, bfloat16."""
    proc = run_cli("report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype", "bfloat16",
                   "--json", "--max-new-tokens", str(MAX_NEW), "--temperature", "0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, f"stdout must be exactly one JSON line, got {len(lines)}: {proc.stdout[:500]!r}"
    return json.loads(lines[0])


@pytest.fixture(scope="module")
def bare_bf16():
    """The bundled model loaded by plain Transformers, to check the report's counts against."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from playground.core.paths import BUNDLED_DIR

    tok = AutoTokenizer.from_pretrained(BUNDLED_DIR)
    model = AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, dtype=torch.bfloat16)
    return model, tok


TOP_LEVEL = {
    "model": str, "device": str, "dtype": str, "device_name": str, "versions": dict,
    "load_seconds": float, "migrate_seconds": float, "eval_seconds": float,
    "param_count": int, "buffer_count": int, "weights_bytes": int, "disk_bytes": int,
    "ram": dict, "vram": dict, "ttft_seconds": float, "prompt_tokens": int, "new_tokens": int,
    "decode_seconds": float, "tokens_per_second": float, "total_seconds": float, "text": str,
    "tokens_streamed": int, "stream_updates": int, "finish_reason": str, "load": dict, "generation": dict,
    "wall_seconds": dict,
}


@pytest.mark.slow
def test_report_has_every_field_with_its_type(report):
    for key, typ in TOP_LEVEL.items():
        assert key in report, key
        assert isinstance(report[key], typ), (key, report[key])
    for pkg in ("python", "torch", "transformers", "accelerate"):
        assert report["versions"][pkg], pkg
    assert report["device_name"].strip()
    assert (report["model"], report["device"], report["dtype"]) == ("shakespeare-gpt2", "cpu", "bfloat16")


@pytest.mark.slow
def test_report_numbers_are_positive_and_consistent(report):
    for key in ("load_seconds", "migrate_seconds", "eval_seconds", "ttft_seconds", "decode_seconds",
                "tokens_per_second", "total_seconds", "param_count", "weights_bytes", "disk_bytes", "prompt_tokens"):
        assert report[key] > 0, key
    assert 1 <= report["new_tokens"] <= MAX_NEW
    assert report["new_tokens"] == report["tokens_streamed"] == report["generation"]["new_tokens"]
    assert report["stream_updates"] >= 1
    # decode rate = (new tokens - 1) / decode time, by the figures' own definitions
    assert report["tokens_per_second"] == pytest.approx((report["new_tokens"] - 1) / report["decode_seconds"])
    assert report["ttft_seconds"] + report["decode_seconds"] <= report["total_seconds"] + 1e-6
    assert report["total_seconds"] <= report["wall_seconds"]["generate"] + 1e-6
    assert report["load_seconds"] + report["migrate_seconds"] <= report["wall_seconds"]["load"] + 1e-6
    # the top-level figures are the load report's and the stats' own, not recomputed
    for key in ("load_seconds", "migrate_seconds", "eval_seconds", "param_count", "weights_bytes", "disk_bytes"):
        assert report[key] == report["load"][key], key
    for key in ("ttft_seconds", "prompt_tokens", "new_tokens", "tokens_per_second", "total_seconds"):
        assert report[key] == report["generation"][key], key
    # RAM before/after each phase, and a reason where there is no VRAM
    assert set(report["ram"]) == {p["name"] for p in report["load"]["phases"]} >= {"load", "migrate", "eval"}
    for phase in report["ram"].values():
        assert phase["rss_before"] > 0 and phase["rss_after"] > 0 and phase["available_after"] > 0
    assert report["vram"]["available"] or report["vram"]["reason"].strip()


@pytest.mark.slow
def test_report_counts_match_the_model_itself(report, bare_bf16):
    model, tok = bare_bf16
    params = list(model.parameters())
    buffers = list(model.buffers())
    assert report["param_count"] == sum(p.numel() for p in params)
    assert report["buffer_count"] == len(buffers)
    assert all(p.dtype.itemsize == 2 for p in params + buffers)  # bfloat16: two bytes per element
    expected = sum(t.numel() * t.element_size() for t in {id(t): t for t in params + buffers}.values())
    assert report["weights_bytes"] == expected
    if not buffers:  # the bundled GPT-2 keeps no buffers, so weights are exactly 2 bytes per parameter
        assert report["weights_bytes"] == report["param_count"] * 2
    assert report["disk_bytes"] == sum(f.stat().st_size for f in Path(model.name_or_path).glob("*.safetensors"))


@pytest.mark.slow
def test_streamed_text_is_what_plain_greedy_generate_produces(report, bare_bf16):
    """An independent count: plain `generate` (greedy) must give the same tokens the CLI streamed."""
    import torch

    model, tok = bare_bf16
    ids = tok(report["prompt"], return_tensors="pt")
    with torch.inference_mode():
        out = model.generate(**ids, max_new_tokens=MAX_NEW, do_sample=False, pad_token_id=tok.eos_token_id)
    new = out[0, ids["input_ids"].shape[-1]:]
    assert report["prompt_tokens"] == ids["input_ids"].shape[-1]
    assert report["new_tokens"] == len(new)
    assert report["text"] == tok.decode(new, skip_special_tokens=True)


@pytest.mark.slow
def test_cli_and_api_give_the_same_load_report(report):
    """The API's load_model (the function gr.api serves), called here, against the CLI's fields:
    counts and bytes exactly, times within noise. The one-off `import` phase is left out: it is
    seconds in a fresh process (the CLI) and zero once the architecture is imported."""
    from playground.run.pool import POOL
    from playground.web.handlers import load_model

    try:
        api = load_model("shakespeare-gpt2", "cpu", "bfloat16")
    finally:
        POOL.unload()
    for key in ("model", "source", "device", "dtype", "dtype_requested", "param_count", "buffer_count",
                "weights_bytes", "disk_bytes", "context_length", "migrate_note"):
        assert report["load"][key] == api[key], key
        if key in report:
            assert report[key] == api[key], key
    assert [p["name"] for p in report["load"]["phases"]] == [p["name"] for p in api["phases"]]
    for key in ("load_seconds", "migrate_seconds", "eval_seconds"):
        a, b = report[key], api[key]
        assert max(a, b) <= 3 * min(a, b) or abs(a - b) <= 0.5, (key, a, b)


@pytest.mark.slow
def test_report_with_no_arguments_uses_the_bundled_model_the_best_device_and_its_dtype():
    from playground.hw import devices

    proc = run_cli("report")
    assert proc.returncode == 0, proc.stderr[-2000:]
    best = devices.best()
    dtype = devices.dtype_name(devices.recommended_dtype(best))
    first = proc.stdout.splitlines()[0]
    assert first.startswith(f"shakespeare-gpt2 on {best.id} (") and first.endswith(f" in {dtype}"), first
    assert "device not given, so" in proc.stdout and "dtype not given, so" in proc.stdout
    assert "· mode: sampling" in proc.stdout  # the page's first generation: sampled, seed 0


def test_help_lists_the_report_command(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    assert "report" in capsys.readouterr().out


@pytest.mark.parametrize("args, words", [
    (["--device", "gpu", "--dtype", "float32"], ["gpu", "cpu"]),
    (["--device", "cpu", "--dtype", "int3"], ["int3", "float32"]),
    (["--device", "cpu", "--dtype", "float32", "--max-new-tokens", "0"], ["max_new_tokens"]),
    (["--device", "cpu", "--dtype", "float32", "--temperature", "hot"], ["temperature"]),
    (["--device", "cpu", "--dtype", "float32", "--prompt", "   "], ["prompt"]),
    (["--device", "cpu", "--dtype", "float32", "--bogus"], ["--bogus"]),
])
def test_bad_arguments_exit_nonzero_with_one_line(args, words, capsys, monkeypatch):
    monkeypatch.setattr(cli, "quiet_libraries", lambda: None)
    code = cli.main(["report", "--model", "shakespeare-gpt2", *args])
    out, err = capsys.readouterr()
    assert code == cli.EXIT_USAGE
    assert out == ""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.mark.parametrize("args, words", [
    (["--limits", "cpu=1MB,disk"], ["below one block", "transformer.wte"]),
    (["--limits", "cpu=12MB"], ["Add the disk tier"]),
    (["--limits", "cpu=16MB,disk", "--device", "cpu"], ["--device", "auto"]),
    (["--limits", "gpu=1GB"], ["is not a limit"]),
])
def test_bad_limits_exit_nonzero_with_one_line(args, words, capsys, monkeypatch):
    monkeypatch.setattr(cli, "quiet_libraries", lambda: None)
    code = cli.main(["report", "--model", "shakespeare-gpt2", "--dtype", "float32", *args])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error: ")]
    assert code == cli.EXIT_USAGE and len(err) == 1 and all(w in err[0] for w in words), err


@pytest.mark.slow
def test_report_with_limits_carries_the_placement_map_read_from_the_tensors():
    proc = run_cli("report", "--model", "shakespeare-gpt2", "--dtype", "float32", "--limits", "cpu=16MB,disk", "--json",
                   "--max-new-tokens", "8", "--temperature", "0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads(proc.stdout)
    assert d["device"] == "auto" and d["limits"] == "cpu=16MB,disk" and d["new_tokens"] == 8
    p = d["placement"]
    assert p["offloaded_bytes"] == 9479168 and p["differences"] == 0 and p["model_device"] == "cpu"
    assert [b["actual"] for b in p["blocks"]].count("disk") == 4
    text = run_cli("report", "--model", "shakespeare-gpt2", "--dtype", "float32", "--limits", "cpu=16MB,disk",
                   "--max-new-tokens", "4").stdout
    assert "placement under cpu=16MB,disk" in text and "actual disk" in text
    # the walk's findings: no such call as model.to('auto'); the checkpoint's dtype is read, not "could not be";
    # the report says what auto became, from the location the load made
    assert "model.to('auto')" not in text and "could not be read" not in text, text
    assert "the checkpoint's own dtype: no cast" in text
    became = d["load"]["location"]["became"]
    assert became.startswith("cpu ") and "+ disk " in became and f"on auto -> {became} (" in text


def test_missing_model_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "quiet_libraries", lambda: None)
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path))
    code = cli.main(["report", "--model", str(tmp_path / "no-such-model"), "--device", "cpu", "--dtype", "float32"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_USAGE
    assert len(err.strip().splitlines()) == 1 and "does not exist" in err, err


def test_no_command_is_a_one_line_error(capsys):
    assert cli.main([]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "report" in err


@pytest.mark.slow  # a fresh Python importing torch: about 3 s
def test_bad_device_from_the_shell_exits_nonzero_without_traceback():
    """The real entry point: `python -m playground` dispatches, argparse and UserError both end in one line."""
    proc = run_cli("report", "--model", "shakespeare-gpt2", "--device", "gpu", "--dtype", "float32", "--json")
    assert proc.returncode == cli.EXIT_USAGE
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    proc = run_cli("frobnicate")
    assert proc.returncode == cli.EXIT_USAGE
    assert len(proc.stderr.strip().splitlines()) == 1 and "frobnicate" in proc.stderr, proc.stderr


def test_readable_summary_says_the_page_s_load_report_and_stats_in_english(bundled):
    """format_report on a real load report (the session's bundled load) and stats made here: the same
    renderers as the page, in English."""
    from playground.run import render
    from playground.run.generation import GenerationStats

    stats = GenerationStats(prompt_tokens=2, new_tokens=5, ttft_seconds=0.01, decode_seconds=0.1, tokens_per_second=40.0,
                            total_seconds=0.11, finish_reason="length", greedy=True)
    r = report_cmd.Report(bundled.report, stats, "hello", "ROMEO:", 5, 3, {"load": 0.2, "generate": 0.12}, "Some CPU",
                          {}, dict(python="3", torch="t", transformers="x", accelerate="a"))
    text = report_cmd.format_report(r)
    assert text.splitlines()[0] == "shakespeare-gpt2 on cpu (Some CPU) in float32"
    assert render.report_markdown(bundled.report, "en") in text and render.stats_markdown(stats, "en") in text
    for needle in ("from_pretrained", "model.to('cpu')", "model.eval()", f"{bundled.report.param_count:,}",
                   "40.0 tokens/s (4 tokens in 0.100 s)", "hello", "max_new_tokens reached"):
        assert needle in text, needle
    assert r.to_dict()["load"] == bundled.report.to_dict() and r.to_dict()["generation"] == stats.to_dict()
