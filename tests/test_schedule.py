"""The suite's files start in the order tests/schedule.py gives them under the README's `--dist loadfile`,
not in pytest-xdist's own (most tests first), which had put the long e2e files last; and xdist's controller, which
reads tests/conftest.py before it starts the workers, is not held up by torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

CONFTEST = """
from tests import schedule

def pytest_configure(config):
    schedule.keep_our_order(config)

def pytest_collection_modifyitems(config, items):
    schedule.sort_items(items)
"""

TEST = """
import os

def test_{i}():
    with open(os.environ["ORDER_LOG"], "a") as f:
        f.write(__file__.rsplit(os.sep, 2)[-2] + "\\n")
"""


@pytest.mark.slow
def test_the_long_running_folders_start_first_under_loadfile(pytester, monkeypatch, tmp_path):
    """core/ sorts before e2e/ by name and holds more tests (xdist's own order would start it); e2e/ starts."""
    log = tmp_path / "order.log"
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("ORDER_LOG", str(log))
    pytester.makeconftest(CONFTEST)
    for folder, files, tests in (("core", 2, 5), ("e2e", 2, 1)):
        for n in range(files):
            body = "".join(TEST.format(i=i) for i in range(tests))
            pytester.makepyfile(**{f"{folder}/test_{folder}_{n}": body})
    result = pytester.runpytest_subprocess("-n", "1", "--dist", "loadfile", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=12)
    assert log.read_text().split() == ["e2e"] * 2 + ["core"] * 10


def test_reading_the_suites_conftest_imports_no_torch():
    """Under `-n 2` the controller reads tests/conftest.py and only then starts the workers: importing torch and the
    playground there cost ~5 s before either worker began (the quick subset's whole run: about a minute)."""
    code = ("import sys, tests.conftest; "
            "print(sorted(m for m in ('torch', 'transformers', 'gradio', 'playground.load') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
