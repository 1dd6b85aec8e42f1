"""The diagnoser: variants seen in the wild map to the right mistake; unrelated errors are not recognised."""

from __future__ import annotations

import random
import string
import time

import pytest

from playground.core.errors import UserError
from playground.core.inputs import check_diagnose_text
from playground.lab.diagnose import SCAN_CHARS, diagnose
from playground.lab.render import diagnose_markdown

SAME = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "

# (pasted text, the id that must come first)
TOP = [
    (SAME + "cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)",
     "inputs-on-cpu"),
    (SAME + "cpu and cuda:0! (when checking argument for argument index in method wrapper_CUDA__index_select)",
     "model-on-cpu"),
    (SAME + "cuda:1 and cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
     "block-left-behind"),
    (SAME + "cuda:0 and cpu! (when checking argument for argument mat2 in method wrapper_CUDA_bmm)",
     "block-left-behind"),
    (SAME + "mps:0 and cpu!", "inputs-on-cpu"),
    ("RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
     "tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)", "inputs-on-cpu"),
    ("RuntimeError: Expected all tensors to be on the same device, but got index is on cuda:0, different from other "
     "tensors on cpu (when checking argument in method wrapper_CUDA__index_select)", "model-on-cpu"),
    ("RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, different from other "
     "tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)", "block-left-behind"),
    ("RuntimeError: Expected all tensors to be on the same device, but got index is on cuda:6, different from other "
     "tensors on cuda:0", "inputs-on-cpu"),
    (SAME + "cpu and xpu:0! (when checking argument for argument index in method wrapper_XPU__index_select)",
     "model-on-cpu"),
    (SAME + "meta and cpu!", "meta-weights-run"),
    ("RuntimeError: Tensor on device meta is not on the expected device cpu!", "meta-weights-run"),
    ("RuntimeError: Placeholder storage has not been allocated on MPS device!", "inputs-on-cpu"),
    ("RuntimeError: expected m1 and m2 to have the same dtype, but got: float != c10::Half", "dtype-mismatch"),
    ("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16", "dtype-mismatch"),
    ("RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half", "dtype-mismatch"),
    ("RuntimeError: expected scalar type Float but found BFloat16", "dtype-mismatch"),
    ("RuntimeError: mixed dtype (CPU): expect parameter to have scalar type of Float", "dtype-mismatch"),
    ('RuntimeError: "addmm_impl_cpu_" not implemented for \'Half\'', "fp16-on-cpu"),
    ("RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same",
     "conv-devices"),
    ("RuntimeError: Input type (MPSFloatType) and weight type (torch.FloatTensor) should be the same",
     "conv-devices"),
    ("NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead "
     "of torch.nn.Module.to() when moving module from meta to a different device.", "meta-weights-moved"),
    ("NotImplementedError: Cannot copy out of meta tensor; no data!", "meta-weights-moved"),
    ("RuntimeError: You can't move a model that has some modules offloaded to cpu or disk.", "offloaded-moved"),
    ("You shouldn't move a model that is dispatched using accelerate hooks.", "offloaded-moved"),
    # the warning alone: its own mistake (loaded with too little memory, unnoticed); .to() adds the refusal above
    ("Some parameters are on the meta device because they were offloaded to the disk.", "offload-warning-ignored"),
    ("Traceback (most recent call last):\n  File \"accelerate/utils/operations.py\", line 160, in send_to_device\n"
     "    return tensor.to(device, non_blocking=non_blocking)\nNotImplementedError: Cannot copy out of meta tensor; no data!",
     "offload-inputs-model-device"),
    ("Some parameters are on the meta device because they were offloaded to the cpu and disk.\n"
     "RuntimeError: Tensor.item() cannot be called on meta tensors", "offload-weight-read"),
    ("RuntimeError: Error(s) in loading state_dict for GPT2LMHeadModel: While copying the parameter named "
     "\"transformer.h.3.ln_1.weight\", ... an exception occurred : ('Cannot copy out of meta tensor; no data!',).",
     "offload-state-dict-saved"),
    ("ValueError: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as it is, "
     "since the model has already been set to the correct devices and casted to the correct `dtype`.",
     "quantized-moved"),
    ("ValueError: .to is not supported for 4-bit or 8-bit bitsandbytes models", "quantized-moved"),
    ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
     "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu').",
     "cuda-checkpoint"),
    ("UserWarning: You are calling .generate() with the `input_ids` being on a device type different than your "
     "model's device. `input_ids` is on cuda, whereas the model is on cpu.", "generate-device-type"),
    ("RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported "
     "at some other API call, so the stacktrace below might be incorrect.", "device-side-assert"),
    ("../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] "
     "Assertion `srcIndex < srcSelectDimSize` failed.", "device-side-assert"),
    ("IndexError: index out of range in self", "device-side-assert"),
    ("AssertionError: Torch not compiled with CUDA enabled", "no-cuda"),
    ("TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
     "Please use float32 instead.", "mps-float64"),
]

TRACEBACK = '''Traceback (most recent call last):
  File "run.py", line 12, in <module>
    out = model(ids)
  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1778, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
  File "/usr/lib/python3/site-packages/torch/nn/functional.py", line 2546, in {op}
    return torch.{op}(weight, input, padding_idx, scale_grad_by_freq, sparse)
{error}
'''


@pytest.mark.parametrize("text,expected", TOP)
def test_variant_maps_to_its_mistake(text, expected):
    d = diagnose(text)
    assert d.recognised
    assert d.ids()[0] == expected, d.ids()


def test_both_devices_without_an_operator_still_match_all_device_mistakes():
    ids = diagnose(SAME + "cuda:0 and cpu!").ids()
    assert ids[0] == "inputs-on-cpu"
    assert {"model-on-cpu", "block-left-behind"} <= set(ids)


def test_the_traceback_operator_refines_a_bare_device_error():
    bare = SAME + "cuda:0 and cpu!"
    assert diagnose(TRACEBACK.format(op="layer_norm", error=bare)).ids()[0] == "block-left-behind"
    assert diagnose(TRACEBACK.format(op="embedding", error=bare)).ids()[0] == "inputs-on-cpu"


def test_same_check_tripped_by_a_dtype_offers_both_readings():
    ids = diagnose("RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) "
                   "should be the same").ids()
    assert ids[:2] == ["conv-devices", "dtype-mismatch"]


@pytest.mark.parametrize("text", [
    'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    cfg["model"]\nKeyError: \'model\'',
    'Traceback (most recent call last):\n  File "app.py", line 9, in load\n    open(path)\n'
    "FileNotFoundError: [Errno 2] No such file or directory: 'weights/model.safetensors'",
    "IndexError: list index out of range",
    "ValueError: too many values to unpack (expected 2)",
])
def test_unrelated_errors_are_not_recognised(text):
    d = diagnose(text)
    assert not d.recognised and d.matches == []
    assert "Not recognised" in diagnose_markdown(d, "en")
    assert "无法识别" in diagnose_markdown(d, "zh")


def test_bad_input_is_a_user_error_at_the_edge():
    for bad in ("", "   \n", None, 42):
        with pytest.raises(UserError):
            check_diagnose_text(bad)


def test_a_megabyte_answers_fast_and_scans_only_the_ends():
    rng = random.Random(0)
    noise = "".join(rng.choice(string.ascii_letters + " \n") for _ in range(1_000_000))
    t0 = time.perf_counter()
    d = diagnose(noise + "\n" + TOP[0][0])
    assert time.perf_counter() - t0 < 1.0
    assert d.ids()[0] == "inputs-on-cpu" and d.text_chars > 1_000_000
    assert d.scanned_chars <= 2 * SCAN_CHARS + 1
    t0 = time.perf_counter()
    assert not diagnose(noise).recognised
    hostile = diagnose("Input type (" * 90_000 + "Expected all tensors to be on the same device" * 20_000)
    assert time.perf_counter() - t0 < 2.0
    assert hostile.text_chars > 1_000_000


def test_to_dict_and_markdown():
    d = diagnose(TOP[2][0])
    out = d.to_dict()
    assert out["recognised"] and out["matches"][0] == "block-left-behind"
    first = out["explanations"][0]
    for k in ("id", "title_en", "title_zh", "explanation_en", "explanation_zh", "fix_before", "fix_after", "matched"):
        assert first[k]
    assert "wrapper_CUDA_addmm" in first["matched"][0]
    en, zh = diagnose_markdown(d, "en"), diagnose_markdown(d, "zh")
    assert "<table>" in en and "<pre>" in en and first["title_en"] in en
    assert first["title_zh"] in zh


# A traceback as a learner pastes it: six lines, a frame named `_call_impl`, `*args, **kwargs` in its code line.
PASTED = """Traceback (most recent call last):
  File "train.py", line 12, in <module>
    out = model(input_ids)
  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl
    return forward_call(*args, **kwargs)
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)"""


def test_the_matched_line_is_one_pasted_line_shown_verbatim_in_code():
    """The walk found the matched line glued from two lines, `_call_impl`'s underscore eaten by Markdown and the
    rest italicised: it is the pasted line itself (one line, not a window of the collapsed text), in a code span."""
    d = diagnose(PASTED)
    pasted = [line.strip() for line in PASTED.splitlines()]
    for m in d.matches:
        assert m.matched and all(line in pasted for line in m.matched), m.matched
    assert d.matches[0].matched[0] == pasted[-1]
    md = diagnose_markdown(d, "en")
    assert f"`{pasted[-1]}`" in md  # a code span: Markdown shows `_` and `*` inside it as written
    assert "<code>" not in md.split("**1.", 1)[1].split("\n\n", 2)[1]


def test_a_long_matched_line_is_cut_around_the_match_with_an_ellipsis():
    """An out-of-memory message is one line of 500 characters: shown cut, with "…" where it was cut."""
    oom = ("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    y = x @ w\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 "
           "GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB memory in use. Of the "
           "allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated. If "
           "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
           "avoid fragmentation.")
    d = diagnose(oom)
    assert d.recognised
    last = oom.splitlines()[-1]
    for m in d.matches:
        line = m.matched[0]
        assert "\n" not in line and len(line) < len(last)
        assert line.endswith("…") or line.startswith("…")
        assert line.strip("…") in last
    short = diagnose(PASTED).matches[0].matched[0]
    assert "…" not in short
