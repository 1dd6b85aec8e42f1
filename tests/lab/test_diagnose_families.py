"""The diagnoser reads what people paste from any version: PyTorch 1.x's device checks, a sampler's generator on
the wrong device, the old embedding's "current device", Accelerate's offload warnings and refusals, and
out-of-memory messages. Each text was pasted in a public issue thread, named beside it; the rules read each
family's structure (two devices, an argument, an operator), not one literal per version."""

from __future__ import annotations

import pytest

from playground.lab.diagnose import diagnose
from playground.lab.render import diagnose_markdown

# (family, pasted text, the mistake that must come first)
FAMILIES = [
    # -- PyTorch 1.x: "Expected object of device type X but got device type Y for argument #N 'arg' in call to op"
    # https://github.com/facebookresearch/fairseq/issues/4104: 'self' of index_select is the embedding's weight
    ("1.x device", "RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' "
                   "in call to _th_index_select", "model-on-cpu"),
    # https://github.com/yangjianxin1/GPT2-chitchat/issues/8: the token ids ('index') left on the CPU
    ("1.x device", "Expected object of device type cuda but got device type cpu for argument #3 'index' in call to "
                   "_th_index_select", "inputs-on-cpu"),
    # https://github.com/Xiangyu-CAS/AICity2020-VOC-ReID/issues/1: a layer's weight outside the model, never moved
    ("1.x backend", "RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'",
     "block-left-behind"),
    # https://github.com/anhaidgroup/deepmatcher/issues/46: the indices on the GPU, the weight on the CPU
    ("1.x backend", "Error: Expected object of backend CPU but got backend CUDA for argument #3 'index'",
     "model-on-cpu"),
    # https://github.com/bei181/AD-Depth-Estimation/issues/1: a convolution's input left on the CPU
    ("1.x device", "RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' "
                   "in call to _thnn_conv2d_forward", "inputs-on-cpu"),
    # https://github.com/TadaoYamaoka/DeepLearningShogi/issues/40: devices as ordinals, two GPUs
    ("1.x ordinals", "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for "
                     "argument #2 'weight'; but device 0 does not equal 1 (while checking arguments for "
                     "cudnn_convolution)", "inputs-on-cpu"),
    # https://github.com/htqin/IR-Net/issues/2
    ("1.x GPUs", "RuntimeError: arguments are located on different GPUs at /opt/conda/conda-bld/pytorch_1533672544752"
                 "/work/aten/src/THC/generated/../generic/THCTensorMathPointwise.cu:314", "cuda-mixed-to"),
    # -- a sampler's generator on another device than the default one
    # https://github.com/NarcissusEx/CuNeRF/issues/8
    ("generator", '  File "/home/zhaolab/miniconda3/envs/cunerf/lib/python3.9/site-packages/torch/utils/data/'
                  'sampler.py", line 165, in __iter__\n    yield from map(int, torch.randperm(n, generator=generator)'
                  ".numpy())\nRuntimeError: Expected a 'cuda' device type for generator but found 'cpu'",
     "generator-device"),
    # https://github.com/zhang-can/CoLA/issues/10 (the other way round)
    ("generator", "RuntimeError: Expected a 'cpu' device type for generator but found 'cuda'", "generator-device"),
    # -- PyTorch 1.x's embedding on the GPU with its indices elsewhere
    # https://github.com/yuhaozhang/summarize-radiology-findings/issues/7
    ("current device", '  File "D:\\vandit\\venv\\lib\\site-packages\\torch\\nn\\functional.py", line 1852, in '
                       "embedding\n    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, "
                       "sparse)\nRuntimeError: Input, output and indices must be on the current device",
     "inputs-on-cpu"),
    # https://github.com/HoyTta0/KnowledgeDistillation/issues/4 (as pasted: no spaces, lower case)
    ("current device", "RuntimeError:input,output and indices must be on the current device", "inputs-on-cpu"),
    # https://github.com/TheLastBen/fast-stable-diffusion/issues/946: `self.logvar[t]`, a plain tensor attribute
    # the model's .to() skipped, indexed with indices on the GPU
    ("indices", "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)",
     "unregistered-tensor"),
    # -- Accelerate's offload: the warning at load, and the two refusals without a folder for the disk
    # https://github.com/hiyouga/LlamaFactory/issues/4697 (its "device device" typo as printed)
    # the warning alone: first the live scenario that loads a model too big and leaves the warning unread (its
    # run shows the blocks on meta), then the explanation of a model that did not fit (the next test checks both)
    ("offload", "WARNING:root:Some parameters are on the meta device device because they were offloaded to the cpu.",
     "offload-warning-ignored"),
    ("offload", "WARNING:root:Some parameters are on the meta device device because they were offloaded to the cpu "
                "and disk.", "offload-warning-ignored"),
    # https://github.com/openlm-research/open_llama/issues/37 (wrapped as the terminal wrapped it)
    ("offload", "ValueError: The current `device_map` had weights offloaded to the disk. Please provide an "
                "`offload_folder` for \nthem. Alternatively, make sure you have `safetensors` installed if the model "
                "you are using offers the weights in \nthis format.", "offloaded-to-fit"),
    # https://github.com/OpenBMB/ToolBench/issues/14
    ("offload", "ValueError: We need an `offload_dir` to dispatch this model according to this `device_map`, the "
                "following submodules need to be offloaded: ", "offloaded-to-fit"),
    # -- out of memory (every wording: tests/lab/test_oom.py)
    # https://github.com/2KangHo/vdsr_pytorch/issues/2
    ("out of memory", "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 15.90 GiB total "
                      "capacity; 13.13 GiB already allocated; 415.88 MiB free; 14.80 GiB reserved in total by "
                      "PyTorch)", "out-of-memory"),
    # https://github.com/haoheliu/AudioLDM2/issues/20
    ("out of memory", "`RuntimeError: MPS backend out of memory (MPS allocated: 18.02 GB, other allocations: 107.10 "
                      "MB, max allowed: 18.13 GB). Tried to allocate 4.50 MB on private pool. Use "
                      "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause "
                      "system failure).`", "out-of-memory"),
    # https://github.com/nguyenvanhoang7398/FANG/issues/1
    ("out of memory", "RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate "
                      "memory: you tried to allocate 1178729664 bytes. Error code 12 (Cannot allocate memory)",
     "out-of-memory"),
]


def test_the_offload_warning_alone_names_its_scenario_then_the_model_that_did_not_fit():
    d = diagnose("WARNING:root:Some parameters are on the meta device device because they were offloaded to the cpu.")
    assert d.ids()[:2] == ["offload-warning-ignored", "offloaded-to-fit"]


@pytest.mark.parametrize("family,text,expected", FAMILIES, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(FAMILIES)])
def test_each_family_is_recognised_from_a_real_paste(family, text, expected):
    d = diagnose(text)
    assert d.recognised and d.ids()[0] == expected, (family, d.ids())
    # every family's explanation is said in both languages
    assert d.matches[0].explanation.text("en") and d.matches[0].explanation.text("zh") != d.matches[0].explanation.text("en")
    assert "无法识别" not in diagnose_markdown(d, "zh")


def test_the_families_cover_item_six():
    assert {f for f, _, _ in FAMILIES} >= {"1.x device", "1.x backend", "generator", "current device", "offload",
                                           "out of memory"}


# Texts about other things, which must stay "not recognised" (beside tests/lab/test_diagnose.py's own list)
@pytest.mark.parametrize("text", [
    "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [1, 224, 224] at "
    "entry 1",
    "ModuleNotFoundError: No module named 'transformers_stream_generator'",
    "OSError: We couldn't connect to 'https://huggingface.co' to load this file",
    "RuntimeError: shape '[1, 12, 64]' is invalid for input of size 1536",
])
def test_other_errors_stay_not_recognised(text):
    d = diagnose(text)
    assert not d.recognised and d.oom is None, d.ids()
