"""The mistakes the diagnoser knows that the lab cannot run: each one's words and fix, beside no scenario.

The lab's scenarios carry their own words (`playground.lab.scenarios`); these are the rest: errors
only a GPU, a quantized model or Apple's MPS can raise, named by the diagnoser with an explanation
and a before/after fix.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.core.i18n import W, register


@dataclass(frozen=True)
class Diagnosis:
    """A mistake the diagnoser knows that the lab cannot run: its words (i18n keys) and its fix."""

    id: str
    title: str  # diagnosis.<id>.title
    explain: str  # diagnosis.<id>.explain
    before: str
    after: str


def diagnosis(did: str, *, title: W, explain: W, before: str, after: str) -> Diagnosis:
    """A diagnosis, its words registered as i18n keys here, beside it."""
    return Diagnosis(did, register(f"diagnosis.{did}.title", title), register(f"diagnosis.{did}.explain", explain),
                     before, after)


# Diagnoses that are not lab scenarios: their words and fixes live here, the scenarios' with the scenarios.
EXTRA: dict[str, Diagnosis] = {d.id: d for d in (
    diagnosis(
        "quantized-moved",
        title=W("A bitsandbytes 4-bit or 8-bit model moved with .to()",
                "用 .to() 移动 bitsandbytes 的 4 位或 8 位模型"),
        explain=W(
            "A model loaded with `load_in_4bit`/`load_in_8bit` (a BitsAndBytesConfig) is placed on the "
            "GPU while loading, and its quantized weights cannot be moved or cast afterwards, so "
            "Transformers refuses `.to()`. Choose the device at load time with `device_map` and leave it "
            "there; move only the inputs.",
            "用 `load_in_4bit`/`load_in_8bit`（BitsAndBytesConf"
            "ig）加载的模型在加载时就被放到 GPU 上，量化后的权重之后不能再移动或转换类型，"
            "所以 Transformers 拒绝 `.to()`。"
            "在加载时用 `device_map` 选定设备，不再移动；只移动输入。",
        ),
        before='model = AutoModelForCausalLM.from_pretrained(\n    name, quantization_config=BitsAndBytesConfig(load_in_4bit=True))\nmodel.to("cuda")',
        after='model = AutoModelForCausalLM.from_pretrained(\n    name, quantization_config=BitsAndBytesConfig(load_in_4bit=True),\n    device_map="auto")\ninputs = inputs.to(model.device)  # move the inputs, not the model',
    ),
    diagnosis(
        "device-side-assert",
        title=W("CUDA device-side assert: usually an index out of range",
                "CUDA device-side assert：通常是索引越界"),
        explain=W(
            "A GPU kernel checked an index and found it out of range, most often a token id at or beyond "
            "the embedding's vocabulary size (a tokenizer that does not match the model, or added tokens "
            "without `resize_token_embeddings`), or a label outside the classes. CUDA reports it late, "
            "at a later call, and the CUDA context is unusable afterwards. Rerun on the CPU (or with "
            "CUDA_LAUNCH_BLOCKING=1) to see the real line, and check `input_ids.max() < "
            "model.get_input_embeddings().num_embeddings`.",
            "某个 GPU 内核检查索引时发现越界，"
            "最常见的是 token id 大于等于词嵌入的词表大小（分词器与模型不匹配，"
            "或添加了 token 却没有 `resize_token_embeddings`），"
            "或者标签超出类别数。CUDA 报告得晚，出现在之后的某次调用，"
            "而且之后 CUDA 上下文就不能再用了。"
            "在 CPU 上重跑（或设置 CUDA_LAUNCH_BLOCKING=1）看到真正出错的行，"
            "并检查 `input_ids.max() < model.get_input_embedding"
            "s().num_embeddings`。",
        ),
        before='ids = tokenizer(text, return_tensors="pt").input_ids.to("cuda")\nmodel(ids)',
        after='ids = tokenizer(text, return_tensors="pt").input_ids\nvocab = model.get_input_embeddings().num_embeddings\nassert int(ids.max()) < vocab, (int(ids.max()), vocab)\n# added tokens? model.resize_token_embeddings(len(tokenizer))\nmodel(ids.to(model.device))',
    ),
    diagnosis(
        "no-cuda",
        title=W("CUDA asked for on a machine or a PyTorch build without it",
                "在没有 CUDA 的机器或 PyTorch 版本上请求 CUDA"),
        explain=W(
            "The code moves something to `cuda`, but this PyTorch is a CPU-only build or no NVIDIA "
            "driver and GPU are visible. Pick the device from what is available: `device = 'cuda' if "
            "torch.cuda.is_available() else 'cpu'`.",
            "代码把东西移到了 `cuda`，但这个 PyTorch 是只支持 CPU 的版本，"
            "或者看不到 NVIDIA 驱动和 GPU。根据可用的设备选择："
            "`device = 'cuda' if torch.cuda.is_available() el"
            "se 'cpu'`。",
        ),
        before='model.to("cuda")',
        after='device = "cuda" if torch.cuda.is_available() else "cpu"\nmodel.to(device)',
    ),
    diagnosis(
        "out-of-memory",
        title=W("Out of memory: the device could not give what was asked", "内存不足：设备给不出所请求的内存"),
        explain=W(
            "The allocator asked the device for one more block and there was none that large. The message carries "
            "its own breakdown: what the request needed, what PyTorch held in live tensors and in its cache, what "
            "the rest of the process and other processes held, and what was free; the bar and the remedies below "
            "are read from those numbers.",
            "分配器向设备再要一块内存，却没有这么大的一块。报错本身就带着明细：这次请求要多少，"
            "PyTorch 在存活张量和缓存里各占多少，进程的其余部分和其他进程占多少，还剩多少空闲；"
            "下面的条形图和办法都是从这些数字读出来的。",
        ),
        before='model = AutoModelForCausalLM.from_pretrained(name).to("cuda")  # float32\nout = model.generate(**inputs, max_new_tokens=4096)',
        after='model = AutoModelForCausalLM.from_pretrained(name, dtype=torch.bfloat16).to("cuda")\n# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set before the process starts\nout = model.generate(**inputs, max_new_tokens=512)',
    ),
    diagnosis(
        "generator-device",
        title=W("A random generator on another device than the sampling", "随机数生成器和采样不在同一个设备上"),
        explain=W(
            "`torch.randperm` (what `RandomSampler`, `DataLoader(shuffle=True)` and `random_split` call) draws with "
            "a `torch.Generator` of one device while the default device is another: usually "
            "`torch.set_default_device('cuda')` or `torch.set_default_tensor_type(torch.cuda.FloatTensor)`, "
            "which make `randperm` run on the GPU with the CPU generator the sampler holds. Keep the default "
            "device the CPU and move each batch, or give the sampler a generator of the same device.",
            "`torch.randperm`（`RandomSampler`、`DataLoader(shuffle=True)` 和 `random_split` 都会调用它）"
            "用一个设备上的 `torch.Generator` 抽样，而默认设备却是另一个：通常是 "
            "`torch.set_default_device('cuda')` 或 `torch.set_default_tensor_type(torch.cuda.FloatTensor)`，"
            "它们让 `randperm` 在 GPU 上运行，而采样器拿着的是 CPU 的生成器。"
            "让默认设备保持为 CPU，逐批移动数据；或者给采样器一个同一设备上的生成器。",
        ),
        before='torch.set_default_device("cuda")\nloader = DataLoader(dataset, batch_size=8, shuffle=True)\nfor batch in loader: ...',
        after='loader = DataLoader(dataset, batch_size=8, shuffle=True)  # sampled on the CPU\nfor batch in loader:\n    batch = batch.to("cuda")',
    ),
    diagnosis(
        "offloaded-to-fit",
        title=W("Accelerate offloaded part of the model: it did not fit", "Accelerate 卸载了模型的一部分：它放不下"),
        explain=W(
            "With `device_map='auto'` the layers that did not fit on the GPUs went to the CPU, and those that did "
            "not fit in RAM either went to disk: their parameters sit on the `meta` device and hooks copy them in "
            "before each block runs, every forward pass, which is slow (disk offload most of all). Disk offload "
            "needs a folder (`offload_folder=`). A smaller dtype (bfloat16, float16) or more memory keeps the "
            "model whole; `max_memory` says how much each device may take.",
            "使用 `device_map='auto'` 时，GPU 放不下的层去了 CPU，内存也放不下的层去了磁盘："
            "它们的参数在 `meta` 设备上，每次前向计算时由钩子在每个块运行前把它们拷进来，这很慢（磁盘卸载尤其慢）。"
            "卸载到磁盘需要一个文件夹（`offload_folder=`）。用更小的数据类型（bfloat16、float16）"
            "或者更多内存可以让模型完整放下；`max_memory` 规定每个设备最多用多少。",
        ),
        before='model = AutoModelForCausalLM.from_pretrained(name, device_map="auto")  # float32',
        after='model = AutoModelForCausalLM.from_pretrained(\n    name, device_map="auto", dtype=torch.bfloat16,\n    max_memory={0: "20GiB", "cpu": "30GiB"}, offload_folder="offload")',
    ),
)}
