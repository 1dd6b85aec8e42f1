"""`python -m playground selfcheck`: run the device tests (`pytest -m device`) and say what passed.

    python -m playground selfcheck                 # a table
    python -m playground selfcheck --json          # one JSON object
    python -m playground selfcheck --device cuda:1 # only that device's tests (and device_map='auto')

Exit status: 0 when nothing failed (a skip is neither a pass nor a failure), 1 when a test failed
or could not be collected, 2 without pytest or the tests. See docs/serving.md.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import time
from pathlib import Path

import torch

from playground.core.errors import UserError, shown
from playground.hw import devices
from playground.tools import report

PASS, FAIL, SKIP = "pass", "fail", "skip"
TESTS = Path(__file__).resolve().parents[2] / "tests"  # the repository's tests, beside the package
INSTALL = "pip install -r tests/requirements.txt"


def parse_device(value: object) -> str | None:
    """--device: cpu, cuda, cuda:N or mps (None: every device). An absent device is not an error
    here: its tests run and skip, saying why."""
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"cpu|mps|cuda(:\d{1,3})?", value.strip()):
        raise UserError(f"--device must be cpu, cuda, cuda:N or mps; got {shown(value, 40)}.")
    value = value.strip()
    return "cuda:0" if value == "cuda" else value


def pytest_args(device: str | None, tests: Path = TESTS) -> list[str]:
    # In this process the app's libraries are already imported, so pytest cannot rewrite the asserts of
    # plugins they bring (anyio's); the tests' own modules are imported, and rewritten, here.
    # A module that cannot be imported is reported as a failure; the other modules' tests still run.
    return [str(tests), "-m", "device", "-q", "-p", "no:cacheprovider", f"--rootdir={tests.parent}",
            "--continue-on-collection-errors", "-W", "ignore::pytest.PytestAssertRewriteWarning",
            *(["--device", device] if device else [])]


def one_line(text: str, limit: int = 400) -> str:
    return " ".join(str(text).split())[:limit]


class Collector:
    """A pytest plugin: each test's verdict, seconds, device, docstring and figures, in the order they ran.
    A test's device and figures come from its user properties ("device" set by tests/conftest.py,
    "figures" filled through the `figures` fixture)."""

    def __init__(self) -> None:
        self.tests: dict[str, dict] = {}

    def _entry(self, nodeid: str, name: str, proves: str = "") -> dict:
        return self.tests.setdefault(nodeid, dict(name=name, test=nodeid, status=None, reason="", device="cpu",
                                                  proves=proves, seconds=0.0, figures={}))

    def pytest_collection_finish(self, session) -> None:
        for item in session.items:
            doc = inspect.getdoc(getattr(item, "function", None)) or ""
            self._entry(item.nodeid, getattr(item, "originalname", item.name), one_line(doc, 1000))

    def pytest_collectreport(self, report) -> None:
        if report.failed:  # a module that cannot be imported hides its tests: a failure, not silence
            e = self._entry(report.nodeid or "collection", report.nodeid or "collection")
            e.update(status=FAIL, reason="not collected: " + one_line(report.longreprtext.strip().splitlines()[-1]))
        elif report.skipped:  # a folder that skips as a whole (tests/web without Gradio): one skip, saying why
            e = self._entry(report.nodeid or "collection", report.nodeid or "collection")
            text = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longreprtext
            e.update(status=SKIP, reason="not collected: " + one_line(str(text).removeprefix("Skipped: ")))

    def pytest_runtest_logreport(self, report) -> None:
        e = self._entry(report.nodeid, report.nodeid.split("::")[-1].split("[")[0])
        e["seconds"] += report.duration
        for key, value in report.user_properties:
            if key == "device":
                e["device"] = value
            elif key == "figures":
                e["figures"].update(value)
        if report.failed and e["status"] != FAIL:
            crash = getattr(report.longrepr, "reprcrash", None)
            text = crash.message if crash is not None else report.longreprtext.strip().splitlines()[-1]
            e.update(status=FAIL, reason=one_line(text) if report.when == "call" else f"{report.when}: {one_line(text)}")
        elif report.skipped and e["status"] is None:
            e.update(status=SKIP, reason=one_line(report.longrepr[2].removeprefix("Skipped: ")))
        elif report.passed and report.when == "call" and e["status"] is None:
            e["status"] = PASS


def machine() -> dict:
    return dict(cpu=devices.cpu_name(), cores=os.cpu_count(), torch_threads=torch.get_num_threads(),
                cuda_build=torch.version.cuda, cuda_devices=devices.cuda_count(),
                versions=report.versions())


def summary(collector: Collector, exit_code: int, device: str | None, seconds: float) -> dict:
    """One dict: every test's verdict (figures flattened beside it), the counts, the machine."""
    checks = []
    for e in collector.tests.values():
        status, reason = e["status"] or FAIL, e["reason"] or ("" if e["status"] else "did not run")
        verdict = dict(name=e["name"], status=status, reason=reason, device=e["device"], proves=e["proves"],
                       seconds=round(e["seconds"], 3), test=e["test"])
        checks.append(verdict | {k: v for k, v in e["figures"].items() if k not in verdict})  # figures after it
    if exit_code not in (0, 1):  # interrupted, a usage or internal error, nothing collected: not a clean run
        checks.append(dict(name="pytest", status=FAIL, reason=f"pytest exited with status {exit_code}", device="",
                           proves="the device tests ran", seconds=0.0, test=""))
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in (PASS, FAIL, SKIP)}
    return dict(checks=checks, passed=counts[PASS], failed=counts[FAIL], skipped=counts[SKIP],
                ok=counts[FAIL] == 0, device=device or "all", machine=machine(), seconds=seconds,
                loadavg=os.getloadavg())


def run(device: str | None = None) -> dict:
    """Run the device tests in this process, each to its verdict; one dict with every result and the counts."""
    if importlib.util.find_spec("pytest") is None:
        raise UserError(f"the self-check runs the device tests with pytest, which is not installed: {INSTALL}")
    if not (TESTS / "conftest.py").is_file():
        raise UserError("the self-check runs the repository's device tests (tests/), which this copy does not "
                        "have: run it in a clone of the repository")
    import pytest  # deferred (optional): a test requirement, absent from a Space; checked just above

    collector = Collector()
    t0 = time.perf_counter()
    code = pytest.main(pytest_args(device), plugins=[collector])
    return summary(collector, int(code), device, time.perf_counter() - t0)


def _figures(d: dict, width: int = 90) -> str:
    skip = {"name", "status", "reason", "device", "proves", "seconds", "test"}
    parts = []
    for k, v in d.items():
        if k in skip or isinstance(v, (dict, list)):
            continue
        parts.append(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}")
    text = ", ".join(parts)
    return text if len(text) <= width else text[:width - 1] + "…"


def table(result: dict) -> str:
    mark = {PASS: "pass", FAIL: "FAIL", SKIP: "skip"}
    w = max([len(c["name"]) for c in result["checks"]] + [4])
    lines = [f"{'test':<{w}} {'device':<7} {'status':<6} {'time':>6}  figures / reason", "-" * (w + 80)]
    for c in result["checks"]:
        detail = c["reason"] if c["status"] != PASS else _figures(c)
        lines.append(f"{c['name']:<{w}} {c['device']:<7} {mark[c['status']]:<6} {c['seconds']:>5.1f}s  {detail}")
    m = result["machine"]
    lines.append(f"{result['passed']} passed, {result['failed']} failed, {result['skipped']} skipped · {m['cpu']}, "
                 f"{m['cores']} cores, torch {m['versions']['torch']}, CUDA {m['cuda_build'] or 'none'} · "
                 f"{result['seconds']:.0f} s")
    return "\n".join(lines)
