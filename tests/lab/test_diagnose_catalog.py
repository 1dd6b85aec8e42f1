"""The diagnoser against the libraries' own messages (the catalog) and the tutorials' error texts as printed.

The catalog is read from the installed PyTorch, Transformers and Accelerate; every entry, its
placeholders filled with several device names, must be recognised and point at its mistake. The
tutorials' texts are quoted below exactly as the five tutorials print them (line wraps included);
where the seeds are on this machine, a test checks each quote is really there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from playground.core.paths import PACKAGE
from playground.lab import messages
from playground.lab.diagnose import EXTRA, diagnose
from playground.lab.scenarios import SCENARIOS

DEVICES = ("cuda:0", "cuda:1", "cpu", "mps:0", "xpu:0", "meta")
DEVICE_MISTAKES = {"inputs-on-cpu", "model-on-cpu", "block-left-behind"}
SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"  # ../shared/seeds beside the worktrees

# (text as the tutorial prints it, which tutorial, what must come first)
TUTORIAL_TEXTS = [
    ("RuntimeError: Expected all tensors to be on the same device, \nbut found at least two devices, cuda:0 and cpu! "
     "\n(When checking argument for argument weight in method \nwrapper_CUDA_addmm)", "000", DEVICE_MISTAKES),
    ("RuntimeError: Input type (torch.FloatTensor) and weight type \n(torch.cuda.FloatTensor) should be the same",
     "000", {"conv-devices"}),
    ("RuntimeError: Expected all tensors to be on the same device", "000", DEVICE_MISTAKES),
    ("Expected all tensors to be on the same device", "002", DEVICE_MISTAKES),
    ("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor)", "002", {"conv-devices"}),
    ("CUDA error: device-side assert triggered", "002", {"device-side-assert"}),
    ("Tensor for argument #2 'mat1' is on CPU", "002", DEVICE_MISTAKES),
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "004", DEVICE_MISTAKES),
]


def test_the_catalog_is_read_from_all_three_libraries():
    entries = messages.catalog()
    assert len(entries) >= 60
    sources = {e.source.split("/")[0].split(":")[0] for e in entries}
    assert {"libtorch_cpu.so", "libtorch_python.so", "torch", "transformers", "accelerate"} <= sources, sources
    kinds = {e.kind for e in entries}
    assert {"device", "dtype", "meta", "deserialize", "offload", "generate", "data-parallel", "numpy",
            "state-dict"} <= kinds, kinds


def test_catalog_entries_point_at_mistakes_that_exist_and_are_not_typed_here():
    # the modules that build the catalog select and read messages: they hold none of them
    ours = "\n".join((PACKAGE / "lab" / name).read_text(encoding="utf-8") for name in ("messages.py", "library_text.py"))
    for e in messages.catalog():
        assert e.mistakes and all(m in SCENARIOS or m in EXTRA for m in e.mistakes), e
        if len(e.text) > 40:  # a whole message: never a copy in our source
            assert e.text not in ours, e.text


def test_every_catalog_message_filled_with_device_names_is_recognised():
    missed = []
    for e in messages.catalog():
        for dev in DEVICES:
            d = diagnose(e.filled(dev))
            if not d.recognised or not set(e.mistakes) & set(d.ids()):
                missed.append((e.source, e.text[:80], dev, d.ids()[:3]))
    assert missed == []


def test_a_catalog_message_wrapped_and_in_other_case_is_still_recognised():
    for e in messages.catalog():
        text = e.filled("cuda:1")
        words = text.split(" ")
        wrapped = "\n".join(" ".join(words[i:i + 6]) for i in range(0, len(words), 6))  # a terminal's wraps
        for variant in (wrapped, text.upper(), text.lower()):
            assert set(e.mistakes) & set(diagnose(variant).ids()), (e.text[:80], variant[:120])


@pytest.mark.parametrize("text,seed,first", TUTORIAL_TEXTS)
def test_the_tutorials_error_texts_as_printed_are_recognised(text, seed, first):
    d = diagnose(text)
    assert d.recognised, text
    assert d.ids()[0] in first, (text, d.ids())


def test_the_quotes_are_the_tutorials_own():
    if not SEEDS.is_dir():
        pytest.skip(f"the tutorials are not on this machine ({SEEDS})")
    flat = {p.name[:3]: re.sub(r"\s+", " ", p.read_text(encoding="utf-8")) for p in SEEDS.glob("*.txt")}
    for text, seed, _ in TUTORIAL_TEXTS:
        assert re.sub(r"\s+", " ", text).strip() in flat[seed], text


@pytest.mark.parametrize("text,expected", [
    ("RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of "
     "them on device: cpu", "dataparallel-not-moved"),
    ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
     "memory first.", "numpy-on-gpu"),
    ('RuntimeError: Error(s) in loading state_dict for GPT2LMHeadModel:\n\tMissing key(s) in state_dict: '
     '"transformer.wte.weight", "transformer.wpe.weight".\n\tUnexpected key(s) in state_dict: '
     '"module.transformer.wte.weight", "module.transformer.wpe.weight".', "dataparallel-prefix"),
    ('RuntimeError: Error(s) in loading state_dict for GPT2LMHeadModel:\n\tMissing key(s) in state_dict: '
     '"lm_head.weight".', "strict-false-hides"),
    ("Expected all tensors to be on the same device, but got target is on cpu, different from other tensors on "
     "cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)", "labels-on-cpu"),
    ("Expected all tensors to be on the same device, but got weight is on cpu, different from other tensors on "
     "cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)", "loss-weight-not-moved"),
    ('  File "train.py", line 9, in <module>\n    labels = labels.cuda()\nAssertionError: Torch not compiled with '
     "CUDA enabled", "cuda-mixed-to"),
    ("UserWarning: 'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
     "won't be used.", "pin-memory-no-gpu"),
    ("EXPECTED ALL TENSORS TO BE ON THE SAME DEVICE, BUT FOUND AT LEAST TWO DEVICES, CPU AND CUDA:0! (WHEN CHECKING "
     "ARGUMENT FOR ARGUMENT INDEX IN METHOD WRAPPER_CUDA__INDEX_SELECT)", "model-on-cpu"),
])
def test_messages_the_old_diagnoser_missed(text, expected):
    assert diagnose(text).ids()[0] == expected, diagnose(text).ids()


def test_case_does_not_change_the_ranking():
    base = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
            "cpu! ({w} checking argument for argument mat1 in method wrapper_CUDA_addmm)")
    assert diagnose(base.format(w="When")).ids() == diagnose(base.format(w="when")).ids()
