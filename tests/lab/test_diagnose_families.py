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


# The dtype lab's families (issue 30): each text pasted in a public thread, named beside it.
DTYPE_FAMILIES = [
    # -- quantized models moved, cast or dispatched
    # https://github.com/huggingface/transformers/issues/38717 (Accelerate's dispatch_model calling model.to)
    ("quantized", "ValueError: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model "
                  "as it is, since the model has already been set to the correct devices and casted to the correct "
                  "`dtype`.", "quantized-moved"),
    # https://github.com/InternLM/xtuner/issues/342
    ("quantized", "ValueError: `.half()` is not supported for quantized model. Please use the model as it is, since "
                  "the model has already been casted to the correct `dtype`.", "quantized-moved"),
    # https://github.com/pytorch/ao/issues/890: a torchao tensor subclass meeting an operator it does not implement
    ("quantized", "NotImplementedError: AffineQuantizedTensor dispatch: attempting to run unimplemented "
                  "operator/function: aten.permute.default", "quantized-offloaded"),
    # https://github.com/pytorch/torchchat/issues/1125: an int4 model moved again with model.to(device)
    ("quantized", "RuntimeError: _apply(): Couldn't swap Linear.weight", "quantized-offloaded"),
    # -- float16 overflow: sampling from scores that reached inf or nan
    # https://github.com/ProjectD-AI/llama_inference/issues/11 (torch.multinomial in a hand-written sampler)
    ("overflow", "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0", "fp16-overflow"),
    # https://github.com/HUANGLIZI/VisionUnite/issues/1 (the wording without backticks, as pasted there)
    ("overflow", "RuntimeError: probability tensor contains either inf, nan or element < 0", "fp16-overflow"),
    # https://github.com/zai-org/GLM-4/issues/637: on a GPU the check is a kernel's assert, its line printed before the
    # traceback, which ends in the generic device-side assert (as the lab's fp16-overflow raised on an H200)
    ("overflow", "../aten/src/ATen/native/cuda/TensorCompare.cu:110: _assert_async_cuda_kernel: block: [0,0,0], "
                 "thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.\n"
                 "Traceback (most recent call last):\n  File \"inference.py\", line 140, in main\n"
                 "RuntimeError: CUDA error: device-side assert triggered", "fp16-overflow"),
    # -- NumPy dtypes
    # https://github.com/pytorch/pytorch/issues/110285
    ("numpy dtype", "TypeError: Got unsupported ScalarType BFloat16", "bf16-numpy"),
    # https://github.com/xwying/torchshow/issues/23
    ("numpy dtype", '  File "torchshow/utils.py", line 60, in tensor_to_array\n    return x.detach().clone().cpu()'
                    ".numpy()\nTypeError: Got unsupported ScalarType BFloat16", "bf16-numpy"),
    # -- index dtypes: an embedding's indices (PyTorch 2.x and 1.x wordings), a gather's index
    # https://github.com/pytorch/pytorch/issues/116598
    ("index dtype", "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
                    "but got torch.FloatTensor instead (while checking arguments for embedding)", "float-indices"),
    # https://github.com/sksq96/pytorch-summary/issues/64
    ("index dtype", "RuntimeError: Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                    "torch.cuda.FloatTensor instead (while checking arguments for embedding)", "float-indices"),
    # https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition/issues/45
    ("index dtype", "RuntimeError: gather_out_cpu(): Expected dtype int64 for index", "float-indices"),
    # https://github.com/intel/auto-round/issues/1838
    ("index dtype", "RuntimeError: gather(): Expected dtype int32/int64 for index", "float-indices"),
    # -- float64 on Apple's MPS: https://github.com/pytorch/pytorch/issues/122602 (as its title quotes it)
    ("mps float64", "TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
                    "float64. Please use float32 instead.", "mps-float64"),
    # -- out of memory, every backend, old and new wordings
    # https://github.com/murong-xu/CADS/issues/4 (CUDA, PyTorch 2.x: torch.OutOfMemoryError)
    ("oom cuda new", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total "
                     "capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has "
                     "18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB "
                     "is reserved by PyTorch but unallocated.", "out-of-memory"),
    # https://github.com/pytorch/pytorch/issues/16417 (CUDA, PyTorch 1.0: "cached")
    ("oom cuda old", "RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; "
                     "8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)", "out-of-memory"),
    # https://github.com/huggingface/autotrain-advanced/issues/737 (ROCm's HIP)
    ("oom hip", "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 124.00 MiB. GPU 0 has a total capacity "
                "of 19.94 GiB of which 554.47 MiB is free. Of the allocated memory 15.87 GiB is allocated by PyTorch, "
                "and 165.29 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
                "try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
     "out-of-memory"),
    # https://github.com/intel/intel-extension-for-pytorch/issues/846 (Intel XPU, PyTorch 2.x: no free figure)
    ("oom xpu new", "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity "
                    "of 15.11 GiB. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by "
                    "PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
     "out-of-memory"),
    # https://github.com/intel/intel-extension-for-pytorch/issues/629 (Intel's extension's older wording)
    ("oom xpu old", "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; "
                    "0 bytes already allocated; 0 bytes reserved in total by PyTorch)", "out-of-memory"),
    # https://github.com/haoheliu/AudioLDM2/issues/20 (Apple's MPS)
    ("oom mps", "RuntimeError: MPS backend out of memory (MPS allocated: 18.02 GB, other allocations: 107.10 MB, max "
                "allowed: 18.13 GB). Tried to allocate 4.50 MB on private pool.", "out-of-memory"),
    # https://github.com/nguyenvanhoang7398/FANG/issues/1 (the CPU allocator)
    ("oom cpu", "RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you "
                "tried to allocate 1178729664 bytes. Error code 12 (Cannot allocate memory)", "out-of-memory"),
]


@pytest.mark.parametrize("family,text,expected", DTYPE_FAMILIES,
                         ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(DTYPE_FAMILIES)])
def test_each_dtype_family_is_recognised_from_a_real_paste(family, text, expected):
    d = diagnose(text)
    assert d.recognised and d.ids()[0] == expected, (family, d.ids())
    assert d.matches[0].explanation.text("zh") != d.matches[0].explanation.text("en")
    if family.startswith("oom"):  # every backend's numbers read: the bar and the remedies come from them
        assert d.oom is not None and d.oom.requested > 0, family


def test_the_xpu_and_hip_messages_are_read_to_their_own_device():
    assert diagnose(DTYPE_FAMILIES[-4][1]).oom.device == "xpu:0" and diagnose(DTYPE_FAMILIES[-4][1]).oom.free is None
    assert diagnose(DTYPE_FAMILIES[-5][1]).oom.device == "cuda:0"  # ROCm names its GPUs cuda:N in PyTorch


@pytest.mark.parametrize("text", [
    "RuntimeError: expected scalar type Long but found Float",  # a loss's target: not an index dtype mistake
    "TypeError: can't multiply sequence by non-int of type 'float'",
    "ValueError: too many values to unpack (expected 2)",
    "RuntimeError: Tensor.item() cannot be called on a tensor with more than one element",
])
def test_near_misses_of_the_dtype_families_are_not_taken_for_them(text):
    d = diagnose(text)
    assert not set(d.ids()) & {"fp16-overflow", "bf16-numpy", "float-indices", "quantized-offloaded", "mps-float64"}
