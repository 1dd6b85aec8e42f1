"""The real-GPU wording: built from the installed library's templates, with torchgen's naming and device checks."""

from __future__ import annotations

from playground.core.paths import PACKAGE
from playground.lab import gpu_wording
from playground.lab.library_text import TORCH_LIB, contains, rodata_strings

OURS = "\n".join(p.read_text(encoding="utf-8") for p in (PACKAGE / "lab").rglob("*.py") if p.name != "diagnose.py")


def test_the_wrapper_wording_matches_what_a_gpu_printed():
    # measured on a GPU with torch 2.13 (NOTES.md, "Facts measured on these machines")
    text, how = gpu_wording.same_device("index_select", "index", "cpu", "cuda:0")
    assert text == ("Expected all tensors to be on the same device, but got index is on cpu, different from other "
                    "tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)")
    assert how.fields["wrapper"] == "wrapper_CUDA__index_select" and how.text("zh")
    assert text not in OURS  # put together from the library's pieces, not typed


def test_every_piece_comes_from_the_library():
    strings = set(rodata_strings(TORCH_LIB / "libtorch_cpu.so"))
    text, _ = gpu_wording.same_device("nll_loss_forward", "target", "cpu", "cuda:0")
    head, rest = text.split("target", 1)
    assert head in strings
    for piece in (", different from other tensors on ", " (when checking argument in method ", " is on "):
        assert piece in text and contains(TORCH_LIB / "libtorch_cpu.so", piece)


def test_torchgen_naming_structured_unstructured_and_unchecked():
    assert gpu_wording.wrapper_name("index_select") == "wrapper_CUDA__index_select"
    assert gpu_wording.wrapper_name("addmm") == "wrapper_CUDA_addmm"  # structured: the old wild wording's name
    assert gpu_wording.wrapper_name("nll_loss_forward") == "wrapper_CUDA_nll_loss_forward"
    assert gpu_wording.wrapper_name("mul.Tensor") is None  # TensorIterator: device_check: NoCheck
    assert gpu_wording.wrapper_name("embedding") is None  # composite: the check is in index_select
    text, how = gpu_wording.same_device("mul.Tensor", "other", "cpu", "cuda:0")
    assert text == "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    assert how.key == "gpu.iterator"


def test_unknown_operators_and_arguments_give_no_sentence():
    assert gpu_wording.same_device("no_such_op", "x", "cpu", "cuda:0") is None
    assert gpu_wording.same_device("index_select", "no_such_argument", "cpu", "cuda:0") is None


def test_the_convolution_and_the_refilled_wordings():
    text, _ = gpu_wording.conv_types("torch.FloatTensor", "torch.cuda.FloatTensor")
    assert text.startswith("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same")
    live = "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    text, how = gpu_wording.refill(live, "meta", "cuda:0", " device type tensor to numpy. Use Tensor.cpu() to ",
                                   TORCH_LIB / "libtorch_python.so")
    assert text.startswith("can't convert cuda:0 device type tensor") and how.fields["old"] == "meta"
    assert gpu_wording.refill(live, "meta", "cuda:0", " not in the library at all ", TORCH_LIB / "libc10.so") is None
