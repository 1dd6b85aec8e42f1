"""`python -m playground selfcheck`: the device tests (pytest -m device) run to one verdict each, with the
figures they measured; a failure makes the run fail; a bad --device, or no pytest, is one line and exit 2."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest

from playground.tools import cli, selfcheck
from tests.conftest import ROOT, present
from tests.tools.test_cli import run_cli

SMALL_SUITE = '''
import pytest


@pytest.mark.device
def test_measures(figures):
    """A pass, and what it proves."""
    figures["rate_gbps"] = 1.5


@pytest.mark.device(kinds=("cpu", "cuda"))
def test_on_each(device, figures):
    figures["seen"] = device


@pytest.mark.device
def test_breaks(figures):
    figures["before_the_failure"] = 7
    assert 1 + 1 == 3, "tokens differ at 3"


@pytest.fixture
def no_model():
    raise RuntimeError("no model to load")


@pytest.mark.device
def test_setup_fails(no_model):
    pass


@pytest.mark.device
def test_skips_itself():
    pytest.skip("NVML is not available")


def test_not_a_device_test():
    pass
'''


@pytest.fixture
def small_run(pytester) -> dict:
    """The self-check's collector on a small suite under the repository's own conftest: a pass with
    figures, one test per device, a failure, a setup error, a skip, a module that cannot be imported."""
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_small=SMALL_SUITE, test_broken="import a_module_that_is_not_there\n")
    c = selfcheck.Collector()
    ret = pytester.runpytest_inprocess(*selfcheck.pytest_args(None, pytester.path), plugins=[c]).ret
    return selfcheck.summary(c, int(ret), None, 1.0)


def test_each_device_test_has_one_verdict_with_its_reason_and_figures(small_run):
    by = {(c["name"], c["device"]): c for c in small_run["checks"]}
    ok = by[("test_measures", "cpu")]
    assert (ok["status"], ok["reason"], ok["rate_gbps"], ok["proves"]) == ("pass", "", 1.5, "A pass, and what it proves.")
    assert ok["test"].endswith("/test_small.py::test_measures") and ok["seconds"] >= 0
    bad = by[("test_breaks", "cpu")]
    assert bad["status"] == "fail" and "tokens differ at 3" in bad["reason"] and bad["before_the_failure"] == 7
    setup = by[("test_setup_fails", "cpu")]
    assert setup["status"] == "fail" and setup["reason"].startswith("setup: ") and "no model to load" in setup["reason"]
    assert (by[("test_skips_itself", "cpu")]["status"], by[("test_skips_itself", "cpu")]["reason"]) == (
        "skip", "NVML is not available")
    broken = next(c for c in small_run["checks"] if c["name"].endswith("/test_broken.py"))
    assert broken["status"] == "fail" and "a_module_that_is_not_there" in broken["reason"]
    # one test per device: each one present passes, a kind this machine lacks skips saying why
    each = [c for c in small_run["checks"] if c["name"] == "test_on_each"]
    cuda_here = [d for d in present() if d.startswith("cuda")]
    assert [c["device"] for c in each] == ["cpu", *(cuda_here or ["cuda"])]
    for c in each:
        assert (c["status"], c.get("seen")) == ("pass", c["device"]) if c["device"] in present() else (
            c["status"] == "skip" and "not available here" in c["reason"])
    assert "test_not_a_device_test" not in {c["name"] for c in small_run["checks"]}
    absent_cuda = 0 if cuda_here else 1
    assert (small_run["failed"], small_run["skipped"], small_run["ok"]) == (3, 1 + absent_cuda, False)
    assert small_run["passed"] + small_run["failed"] + small_run["skipped"] == len(small_run["checks"]) == 5 + len(each)


def test_a_folder_that_needs_an_absent_package_is_one_skip_saying_why(pytester, monkeypatch):
    """A bare CUDA image has no Gradio: tests/web and tests/e2e failed to collect there (22 errors, the self-check
    exit 1). A folder whose conftest asks for the web layer (here with a package that is absent everywhere) is one
    skip naming what is missing; the other folders' device tests run."""
    monkeypatch.delenv("PLAYGROUND_REQUIRE_BROWSER", raising=False)  # .ci/run sets it; a bare GPU image does not
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8").replace(
        'WEB_LAYER = ("gradio", "gradio_client")', 'WEB_LAYER = ("a_web_layer_that_is_not_there",)'))
    web = pytester.mkpydir("web")
    (web / "conftest.py").write_text("from conftest import need_web_layer\n\nneed_web_layer('tests/web')\n")
    (web / "test_page.py").write_text("import a_web_layer_that_is_not_there\n")
    pytester.makepyfile(test_small=SMALL_SUITE.split("@pytest.mark.device\ndef test_breaks")[0])
    c = selfcheck.Collector()
    ret = pytester.runpytest_inprocess(*selfcheck.pytest_args(None, pytester.path), plugins=[c]).ret
    run = selfcheck.summary(c, int(ret), None, 1.0)
    web_skip = [ch for ch in run["checks"] if ch["test"].endswith("/web")]
    assert len(web_skip) == 1 and web_skip[0]["status"] == "skip", run["checks"]
    assert "tests/web needs the web layer: a_web_layer_that_is_not_there not installed" in web_skip[0]["reason"]
    assert run["failed"] == 0 and run["ok"] and run["passed"] >= 2, run["checks"]
    monkey = pytest.MonkeyPatch()
    monkey.setenv("PLAYGROUND_REQUIRE_BROWSER", "1")  # .ci/run: the web layer must be there
    try:
        c = selfcheck.Collector()
        ret = pytester.runpytest_inprocess(*selfcheck.pytest_args(None, pytester.path), plugins=[c]).ret
    finally:
        monkey.undo()
    assert not selfcheck.summary(c, int(ret), None, 1.0)["ok"]


def test_the_table_gives_figures_for_a_pass_and_the_reason_otherwise(small_run):
    text = selfcheck.table(small_run)
    assert re.search(r"test_measures\s+cpu\s+pass .*rate_gbps=1.5", text)
    assert re.search(r"test_skips_itself\s+cpu\s+skip .*NVML is not available", text)
    assert re.search(r"test_breaks\s+cpu\s+FAIL .*tokens differ at 3", text)
    assert f"{small_run['passed']} passed, 3 failed, {small_run['skipped']} skipped" in text


def test_no_pytest_or_no_tests_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "pytest", None)  # what importlib finds when pytest is not installed
    assert cli.main(["selfcheck"]) == 2
    monkeypatch.undo()
    err = capsys.readouterr().err.strip()
    assert err == ("error: the self-check runs the device tests with pytest, which is not installed: "
                   "pip install -r tests/requirements.txt")
    monkeypatch.setattr(selfcheck, "TESTS", tmp_path / "tests")  # a Space: the package without its tests
    assert cli.main(["selfcheck"]) == 2
    assert "this copy does not have" in capsys.readouterr().err and len(err.splitlines()) == 1


@pytest.mark.slow  # a fresh Python importing torch: about 3 s
def test_selfcheck_bad_device_is_one_line_and_exit_2():
    proc = run_cli("selfcheck", "--device", "gpu0")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().startswith("error: --device must be cpu, cuda, cuda:N or mps")
    assert len(proc.stderr.strip().splitlines()) == 1


def gpu_doc_section() -> str:
    """docs/gpu.md's "The self-check": the table of what each device test proves (the README links to it)."""
    doc = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
    section = doc[doc.index("## The self-check"):]
    return section[:section.index("\n## ", 5)]


def test_selfcheck_json_prints_one_object_on_stdout_and_exits_with_its_verdict(small_run, monkeypatch, capfd):
    """`selfcheck --json`: stdout is one JSON line, the run's result; pytest's own output (written to fd 1 while
    the run is under way) goes to stderr; a failed device test makes the exit status 1."""
    def run(device):
        print("collected 5 items")  # what pytest writes while the tests run
        os.write(1, b"a C-level line\n")
        return small_run

    monkeypatch.setattr(selfcheck, "run", run)
    assert cli.main(["selfcheck", "--json"]) == 1
    out, err = capfd.readouterr()
    assert out.count("\n") == 1 and json.loads(out) == json.loads(json.dumps(small_run, default=str))
    assert "collected 5 items" in err and "a C-level line" in err
