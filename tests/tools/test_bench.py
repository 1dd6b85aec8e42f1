"""`python -m playground.bench`: the JSON is well formed and names every ratio.

Benchmarks are not timed tests: nothing here asserts a speed. The meters the
benchmark relies on are checked against allocations of known size.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from playground.tools import bench
from tests.conftest import ROOT  # noqa: E402

CASE_RATIOS = {"decode_tokens_per_second_ratio", "ttft_difference_seconds", "load_migrate_ratio", "peak_rss_load_ratio"}


@pytest.mark.slow
def test_quick_json_names_every_ratio():
    # the one bench command's default subcommand (python -m playground.bench runs the same code)
    proc = subprocess.run([sys.executable, "-m", "playground", "bench", "parity", "--quick", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout[:500]
    result = json.loads(lines[0])

    assert set(bench.TARGETS) == CASE_RATIOS | {"cold_start_ratio"}
    assert list(result["cases"]) == ["shakespeare-gpt2 cpu float32"]
    case = result["cases"]["shakespeare-gpt2 cpu float32"]
    assert set(case["ratios"]) == CASE_RATIOS
    assert result["ratios"]["shakespeare-gpt2 cpu float32"] == case["ratios"]
    assert set(result["ratios"]["cold_start"]) == {"cold_start_ratio"}
    for group in result["ratios"].values():
        for name, r in group.items():
            assert set(r) >= {"value", "target", "met", "what"}, name
            assert r["target"].split()[0] in (">=", "<=")
    for name, r in case["ratios"].items():  # measured in --quick: numbers, and no verdict (2 runs cannot judge)
        assert isinstance(r["value"], float), name
        assert r["met"] is None, name
    assert result["all_met"] is None and result["verdict"].startswith("not judged") and result["missed"] == []
    assert all(r.get("met") is None for r in case["info"].values())
    assert "not judged" in bench.table(result).splitlines()[-1]
    # medians of both sides, from the runs asked for
    assert case["runs"] == 2 and len(case["runs_detail"]["bare"]) == len(case["runs_detail"]["playground"]) == 2
    for side in ("bare", "playground"):
        m = case["medians"][side]
        assert m["tokens_per_second"] > 0 and m["ttft_seconds"] > 0 and m["load_seconds"] > 0 and m["peak_rss"] > 0
        assert 1 <= m["new_tokens"] <= 16
    # greedy on both sides: the same number of tokens, or the comparison would be unfair
    assert case["same_token_count"] is True
    assert set(result["missed"]) | set(result["not_measured"]) <= {
        f"{c}: {n}" for c, g in result["ratios"].items() for n in g}


PEAK_RSS_SCRIPT = """
import json
from playground.tools import bench_sides
with bench_sides.PeakRSS() as mem:
    buf = bytearray(64 << 20)  # zero-filled by calloc: touched pages only once written
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    del buf
print(json.dumps(dict(growth=mem.growth, peak=mem.peak, start=mem.start)))
"""


@pytest.mark.slow
def test_peak_rss_sees_a_short_lived_allocation():
    """A 64 MiB buffer that lives for a moment and is freed inside the block still counts. Measured in a process
    of its own: RSS and VmHWM are the whole process's, and a worker's threads left by earlier tests (a pool's, a
    server's) freeing memory meanwhile once hid the buffer here (growth 0 in a CI run)."""
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS_SCRIPT], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    mem = json.loads(proc.stdout.strip().splitlines()[-1])
    assert mem["growth"] >= 60 << 20
    assert mem["peak"] >= mem["start"]


def test_targets_compare_the_right_way():
    assert bench.TARGETS["decode_tokens_per_second_ratio"].met(0.98) is True
    assert bench.TARGETS["decode_tokens_per_second_ratio"].met(0.9) is False
    assert bench.TARGETS["ttft_difference_seconds"].met(0.005) is True
    assert bench.TARGETS["ttft_difference_seconds"].met(0.05) is False
    assert bench.TARGETS["cold_start_ratio"].met(None) is None


def test_an_absolute_target_is_judged_only_where_the_runs_resolve_it():
    # a 20 ms target on a prefill of seconds that moves by hundreds of ms from run to run: neither met nor missed
    wild = [0.31, -0.22, 0.48, -0.41, 0.12, 0.25, -0.05]
    r = bench._resolved("ttft_difference_seconds", 0.245, wild)
    assert r["met"] is None and r["unresolved"] is True and r["resolution"] > 0.02
    # the same median, resolved: missed; a small one, resolved: met
    steady = [0.244, 0.246, 0.243, 0.247, 0.245]
    assert bench._resolved("ttft_difference_seconds", 0.245, steady)["met"] is False
    r = bench._resolved("ttft_difference_seconds", 0.011, [0.010, 0.012, 0.011, 0.009, 0.013])
    assert r["met"] is True and "unresolved" not in r and r["resolution"] < 0.002
    # the page's own TTFT beside it is judged the same way: one fact, not "can't tell" and "NO" in one case
    r = bench._resolved("ttft_reported_difference_seconds", 0.0675, wild, bench.INFO)
    assert r["met"] is None and r["unresolved"] is True


def test_bad_bench_arguments_are_one_line(capsys):
    assert bench.main(["--runs", "0"]) == 2
    assert bench.main(["--runs", "many"]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 2 and all(ln.startswith("error: ") for ln in err), err


def test_engine_section_prints_speedup_share_of_bound_and_what_was_missed():
    """... and whether the machine kept one speed while they ran (the probe read before each timed run)."""
    from playground.tools import bench_engines
    from playground.tools.alternate import steadiness

    def model(name, gen, comp, bound, key_value, limit, met):
        return dict(model=name, runs=5, weights_bytes=368_000_000, read_gbps=40.0, bound_tokens_per_second=bound,
                    compile_seconds=21.0, generate_tokens_per_second=gen, manual_tokens_per_second=gen,
                    compiled_tokens_per_second=comp, speedup=comp / gen, generate_percent_of_bound=100 * gen / bound,
                    manual_percent_of_bound=100 * gen / bound, percent_of_bound=100 * comp / bound,
                    same_tokens=True, profile=None,
                    target=dict(what=bench_engines.TARGETS[name][2], value=key_value, limit=limit, met=met,
                                missed_by=None if met else limit - key_value))

    result = dict(models={
        "shakespeare-gpt2": model("shakespeare-gpt2", 450.0, 900.0, 2000.0, 2.0, 1.2, True),
        "synthetic/gpt2-small": model("synthetic/gpt2-small", 50.0, 50.0, 108.0, 46.3, 50.0, False),
    }, loadavg_before=(0.5, 0, 0), loadavg_after=(0.7, 0, 0),
        machine_speed=steadiness([0.0073, 0.0135, 0.0132, 0.0075, 0.0131, 0.0074, 0.0136, 0.0133]))
    text = bench_engines.table(result)
    assert "2.00x" in text and "met" in text
    assert "MISSED by 3.70" in text  # 46.3% of the bound against 50%
    assert "load average before 0.50" in text
    assert "machine speed: a fixed Python loop took 7.3 ms to 13.6 ms" in text and "NOT QUIET" in text
    assert set(bench_engines.TARGETS) == set(bench_engines.MODELS)


def test_a_run_is_printed_beside_an_earlier_one(tmp_path, capsys):
    """`--against before.json`: each target before and after and what moved, so that a change is judged against
    main's figures from the same machine; a file that is not a run's JSON is one line, exit 2."""
    before = {"ratios": {"m cpu float32": {"ttft_difference_seconds": {"value": 0.129, "met": False}}},
              "missed": ["m cpu float32: ttft_difference_seconds"]}
    after = {"ratios": {"m cpu float32": {"ttft_difference_seconds": {"value": 0.004, "met": True}}}, "missed": []}
    text = bench.against(before, after)
    assert "0.129" in text and "0.004" in text and "-0.125" in text and " ok" in text
    assert text.splitlines()[-1] == "missed before: 1 · missed now: 0"
    after["ratios"]["m cpu float32"]["ttft_difference_seconds"].update(met=None, unresolved=True, resolution=0.09)
    after["unresolved"] = ["m cpu float32: ttft_difference_seconds"]
    text = bench.against(before, after)
    assert "can't tell (±0.090)" in text and text.endswith("missed now: 0 · not resolvable now: 1")
    bad = tmp_path / "not.json"
    bad.write_text("table, not JSON")
    assert bench.main(["--quick", "--against", str(bad)]) == 2
    assert "--against" in capsys.readouterr().err


def test_one_bench_command_lists_its_subcommands_and_refuses_an_unknown_one(capsys):
    from playground.tools import cli

    assert cli.main(["bench", "fast"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "invalid choice" in err and all(name in err for name in ("parity", "engines", "compare", "page"))


def _bench(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground", "bench", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow
def test_bench_engines_runs_each_engine_once():
    """The command's wiring, on one model (each model compiles its own graphs: GPT-2 small's took ~40 s more here);
    the compiled engine itself: tests/run/test_compiled.py."""
    proc = _bench("engines", "--runs", "1", "--max-new-tokens", "4", "--engine-model", "shakespeare-gpt2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split()[0] for line in proc.stdout.splitlines()[2:] if line and not line.startswith(" ")]
    assert "generate()" in proc.stdout and "compiled" in proc.stdout and rows[0] == "shakespeare-gpt2", proc.stdout
    assert "synthetic/gpt2-small" not in proc.stdout  # the one model asked for


@pytest.mark.slow
def test_bench_compare_runs_one_repeat_and_counts_contradictions():
    proc = _bench("compare", "--repeats", "1", "--tokens", "4", "--runs", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("repeat 1: ") and "contradictions" in proc.stdout


def test_the_machine_speed_is_read_before_each_timed_run_and_said_when_it_moved():
    """The targets hold on a quiet machine: a fixed loop timed before every run says whether the machine kept one
    speed. This 2-core VM was seen switching between ~7 and ~13 ms for that loop within a second, idle."""
    from playground.tools.alternate import alternate, steadiness

    speeds: list[float] = []
    timed = alternate({"a": lambda: 1, "b": lambda: 2}, runs=3, warmup=1, speeds=speeds)
    assert timed == {"a": [1, 1, 1], "b": [2, 2, 2]} and len(speeds) == 6 and all(x > 0 for x in speeds)
    assert steadiness(speeds[:4]) is None  # too few to say
    steady = steadiness([0.0071, 0.0073, 0.0072, 0.0070, 0.0074, 0.0072] * 3 + [0.0120])  # one interrupted reading
    assert steady["quiet"] is True and steady["spread"] < 1.2 and steady["slowest"] == 0.0120
    two_speeds = steadiness([0.0073, 0.0135, 0.0132, 0.0075, 0.0131, 0.0074, 0.0136, 0.0133])
    assert two_speeds["quiet"] is False and two_speeds["spread"] > 1.7
    result = dict(cases={}, cold_start=dict(ratio=dict(met=None), skipped="not run"),
                  settings=dict(runs=3, max_new_tokens=8), machine=dict(cpu="x", cores=2, versions=dict(torch="t")),
                  all_met=False, seconds=1.0, machine_speed=two_speeds)
    lines = bench.table(result).splitlines()
    assert "NOT QUIET" in lines[-2] and "7.3 ms to 13.6 ms" in lines[-2]
    assert "not on a quiet machine" in lines[-1]
    result["machine_speed"] = steady
    lines = bench.table(result).splitlines()
    assert lines[-2].endswith("quiet (a quiet machine stays within 1.2x)") and "quiet machine:" not in lines[-1]


def test_the_cold_start_warms_each_side_once_uncounted_then_alternates():
    """A start after a code change compiles the changed files (and, under this image's
    PYTHONDONTWRITEBYTECODE=1, every start compiled the playground again): the first start of each side
    is a warm-up, not one of the runs."""
    calls = []

    def side(name, seconds):
        def run():
            calls.append(name)
            return seconds[len([c for c in calls if c == name]) - 1]
        return run

    result = bench.cold_start(2, sides={"app": side("app", [99.0, 9.0, 11.0]),
                                        "imports": side("imports", [50.0, 7.0, 8.0])})
    assert calls == ["app", "imports", "app", "imports", "imports", "app"]
    assert result["app_seconds"] == [9.0, 11.0] and result["import_seconds"] == [7.0, 8.0]
    assert result["medians"] == {"app_to_http_200_seconds": 10.0, "import_torch_transformers_gradio_seconds": 7.5}


def test_both_cold_start_sides_cache_bytecode_as_a_users_python_does(monkeypatch):
    from playground.tools import server

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = server.child_env(7999, bench.USER_PYTHON)
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PLAYGROUND_PORT"] == "7999"
    assert server.child_env(7999, {"X_SET": "1"})["PYTHONDONTWRITEBYTECODE"] == "1"  # left as it is otherwise
