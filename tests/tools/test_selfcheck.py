"""`python -m playground selfcheck`: on this CPU-only machine, at least 12 checks, none failing, at least 6
passing, every skip with its reason; a bad --device is one line and exit 2 (which checks --device keeps is
tests/tools/test_checks.py's)."""

from __future__ import annotations

import json

import pytest
import torch

from tests.tools.test_cli import run_cli


@pytest.mark.slow
def test_selfcheck_json_on_this_machine():
    proc = run_cli("selfcheck", "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout[:500]
    r = json.loads(lines[0])
    by = {c["name"]: c for c in r["checks"]}
    print("\n" + "\n".join(f"{c['name']:<28} {c['status']:<5} {c['seconds']:6.1f} s  {c['reason']}" for c in r["checks"]))
    assert len(r["checks"]) >= 12 and r["failed"] == 0 and r["passed"] >= 6 and r["ok"]
    assert r["passed"] + r["skipped"] == len(r["checks"])
    for c in r["checks"]:
        assert {"name", "status", "reason", "proves", "seconds"} <= set(c)
        assert c["status"] in ("pass", "skip")
        assert (c["status"] == "skip") == bool(c["reason"])  # every skip says why, a pass has nothing to explain
    # the figures each pass measured
    assert by["kv_cache_cpu"]["max_error"] <= 0.02
    assert by["host_bandwidth"]["read_gbps"] > 0 and by["load_cpu"]["weights_bytes"] > 0
    if not torch.cuda.is_available():
        assert by["cuda_migrate"]["status"] == "skip" and "no CUDA" in by["cuda_migrate"]["reason"]
        assert by["break_it_simulated"]["status"] == "pass"


def test_selfcheck_bad_device_is_one_line_and_exit_2():
    proc = run_cli("selfcheck", "--device", "gpu0")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().startswith("error: --device must be cpu, cuda, cuda:N or mps")
    assert len(proc.stderr.strip().splitlines()) == 1
