"""A broken script run in a process of its own (lab/apart.py): what a GPU's device-side assert needs, run here on
the same path with the CPU as the device (the H200 run of 2026-11-27 lost 100 device tests to one such assert
run in-process: docs/gpu.md)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from playground.core.i18n import in_lang
from playground.lab import apart, harness
from playground.lab.scenarios import dtype_values

# the line the H200 printed for fp16-overflow's multinomial (logs/break_it.log of docs/gpu.md's run)
KERNEL_LINE = ("/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:109: _assert_async_cuda_kernel: block: [0,0,0], "
               "thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.")
STAND_IN = f"""
import sys
print("before the kernel")
print({KERNEL_LINE!r})
class AcceleratorError(RuntimeError):
    pass
def sample():
    raise AcceleratorError("CUDA error: device-side assert triggered")
sample()
"""


def test_a_script_run_apart_reports_its_exception_its_output_and_the_kernels_assert_lines_apart():
    done = apart.run_apart(STAND_IN, timeout=60)
    assert done.raised and done.exit_status == 1
    assert (done.error_type, done.error_bases) == ("AcceleratorError", ["RuntimeError"])
    assert done.error_message == "CUDA error: device-side assert triggered"
    assert done.output == "before the kernel"
    assert len(done.kernel_lines) == 1 and "Assertion `probability tensor" in done.kernel_lines[0]
    # the frames are the script's, named as the lab names a script; no temporary path of the server
    assert [(f.filename, f.name, f.line) for f in done.frames] == [
        ("<broken script>", "<module>", "sample()"),
        ("<broken script>", "sample", 'raise AcceleratorError("CUDA error: device-side assert triggered")')]


def test_a_script_that_does_not_finish_is_stopped_and_not_taken_for_a_raise():
    done = apart.run_apart("import time\ntime.sleep(30)\n", timeout=2)
    assert done.timed_out and not done.raised and done.error_type is None


def test_a_script_that_runs_through_is_not_a_raise():
    done = apart.run_apart('print("fine")\n', timeout=60)
    assert (done.raised, done.output, done.exit_status, done.kernel_lines) == (False, "fine", 0, [])


@pytest.mark.slow
def test_on_a_device_type_it_names_the_broken_script_runs_apart_and_raises_what_it_raises_in_process(bundled,
                                                                                                     monkeypatch):
    """fp16-overflow with the CPU named in `apart_on`: the same path a CUDA device takes, raised by the child."""
    here = harness.run(dtype_values.fp16_overflow, bundled.model, bundled.tokenizer)
    apart_sc = dataclasses.replace(dtype_values.fp16_overflow, apart_on=("cpu",))
    monkeypatch.setattr(dtype_values, "fp16_overflow", apart_sc)  # the scenario's function reads its global
    there = harness.run(apart_sc, bundled.model, bundled.tokenizer)
    assert here.raised and there.raised
    assert (there.error_type, there.error_message) == (here.error_type, here.error_message)
    assert re.search(r"probability tensor contains", there.error_message)
    assert there.broken_output == here.broken_output and "overflowed to inf" in there.broken_output
    # the frames as the in-process run names them: the script's line, no path of the server
    assert (there.frame, there.raised_in) == (here.frame, here.raised_in)
    assert there.traceback and there.traceback == here.traceback[-len(there.traceback):]  # less the lab's own frames
    assert there.frame.startswith("<broken script>:") and "/tmp" not in "".join(there.traceback)
    assert any(n.key == "lab.apart" for n in there.notes) and not any(n.key == "lab.apart" for n in here.notes)
    note = next(n for n in there.notes if n.key == "lab.apart")
    assert "no assert line" in in_lang(note, "en")  # the CPU raises in Python: no kernel printed an assert
    # the tensors and the overflow count come from the fix's float16 logits: the same numbers as in-process
    assert there.measured == here.measured and there.measured["scores_inf"] > 0
    assert there.fix_ok and here.fix_ok


def test_a_kernels_assert_line_reaches_the_diagnoser_before_the_generic_device_side_assert():
    """On the H200 the diagnoser read only "CUDA error: device-side assert triggered" from fp16-overflow's result and
    named the generic family; the kernel's own line, printed before the traceback, names the overflow."""
    from playground.core.i18n import said
    from playground.lab.diagnose import diagnose
    from playground.lab.result import BreakResult

    r = BreakResult(scenario="fp16-overflow", number=31, title=said("scenario.fp16-overflow.title"), raised=True,
                    error_type="AcceleratorError", error_message="CUDA error: device-side assert triggered",
                    device_lines=[KERNEL_LINE])
    assert "Assertion `probability tensor" in r.diagnose_text()
    assert diagnose(r.diagnose_text()).ids()[0] == "fp16-overflow"
