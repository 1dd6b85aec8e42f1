"""Claims about speed and size: CPU tokens per second, float16's bytes, GPU speed-ups, PCIe copies, synchronize.

The CPU's speed is measured on a model of distilgpt2's shape (the tutorials' model) with random
weights: the time per token does not depend on the values. GPU speed-ups and PCIe transfers are not
measurable on this machine, and say so.
"""

from __future__ import annotations

import os
import time

import torch

from playground.core.i18n import W, said
from playground.hw.census import weights_bytes
from playground.lab.factcheck.claim import T1, T3, Evidence, claim

NEW_TOKENS = 24
RUNS = 2


def distilgpt2_shape(meta: bool = False):
    """GPT-2 with distilgpt2's published shape (6 layers, 768 wide, 12 heads, 50,257 tokens)."""
    from transformers import AutoModelForCausalLM, GPT2Config  # deferred (start-up): catalog.import_model_classes
    config = GPT2Config(n_layer=6, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024)
    if meta:
        with torch.device("meta"):
            return AutoModelForCausalLM.from_config(config)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    model = model.to_empty(device="cpu").eval()  # allocate; a random fill is quicker than the full init
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.uniform_(-0.02, 0.02, generator=generator)
    model.tie_weights()
    return model


@claim("cpu-tokens-per-second", f"{T1}，场景 3：都在 CPU，但应该用 GPU / 性能对比", where="panel:stats",
       quote=("CPU", "1-5", "10-100x 慢"),
       says=W("On a CPU, inference runs at 1-5 tokens/s (distilgpt2).", "在 CPU 上推理只有 1-5 tokens/s（distilgpt2）。"),
       evidence=W(
           "Live: a model of distilgpt2's shape ({params:,} parameters, float32, random weights: the time per token "
           "does not depend on them) generated {new} tokens greedily in {seconds} s (the faster of {runs} runs) on "
           "this machine's CPU ({cores} cores, {threads} PyTorch threads, load average {load} from all its work): "
           "{rate} tokens/s, prompt included. {conclusion}",
           "实测：一个 distilgpt2 形状的模型（{params:,} 个参数，float32，随机权重：每个 token 的用时与权重值无关）"
           "在这台机器的 CPU 上（{cores} 个核，PyTorch 用 {threads} 个线程，整机负载均值 {load}）"
           "用 {seconds} 秒（{runs} 次运行中较快的一次）贪心生成了 {new} 个 token：{rate} tokens/s，含提示词处理。"
           "{conclusion}"),
       more={"faster": W("The tutorial's 1-5 tokens/s is far below what this CPU does.",
                         "教程说的 1-5 tokens/s 远低于这台 CPU 的实际速度。"),
             "as_said": W("The tutorial's 1-5 tokens/s is what this CPU did in this run.",
                          "教程说的 1-5 tokens/s 与这次运行中这台 CPU 的速度相符。")})
def cpu_tokens_per_second() -> Evidence:
    model = distilgpt2_shape()
    ids = torch.tensor([[464, 3290, 318, 257, 1332]])
    kw = dict(attention_mask=torch.ones_like(ids), do_sample=False, pad_token_id=0)
    times = []
    with torch.inference_mode():
        model.generate(ids, max_new_tokens=2, **kw)  # warm-up
        for _ in range(RUNS):  # other work on the machine only ever adds time: the faster run is the CPU's
            t0 = time.perf_counter()
            out = model.generate(ids, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, **kw)
            times.append(time.perf_counter() - t0)
    seconds = min(times)
    new = out.shape[1] - ids.shape[1]
    rate = new / seconds
    params = sum(p.numel() for p in model.parameters())
    del model
    faster = rate > 5
    return Evidence("false" if faster else "true",
                    dict(params=params, new=new, seconds=round(seconds, 2), rate=round(rate, 1), runs=RUNS,
                         cores=os.cpu_count(), load=round(os.getloadavg()[0], 1), threads=torch.get_num_threads(),
                         conclusion=said("claim.cpu-tokens-per-second.faster" if faster
                                         else "claim.cpu-tokens-per-second.as_said")))


@claim("float16-halves-weights", f"{T1}，步骤 3：显存占用计算", where="panel:estimate-out",
       says=W("float16: 2 bytes per parameter, 82M × 2 = 164 MB.", "每个参数 2 字节；总大小：82M × 2 = 164 MB"),
       evidence=W(
           "Live, from the model built on the meta device (shapes only): distilgpt2's shape has {params:,} "
           "parameters; its weights take {f32_mb} MB in float32 and {f16_mb} MB in float16, exactly half.",
           "实测，用在 meta 设备上构建的模型（只有形状）：distilgpt2 的形状有 {params:,} 个参数；"
           "权重在 float32 下占 {f32_mb} MB，float16 下占 {f16_mb} MB，正好一半。"))
def float16_half_size() -> Evidence:
    model = distilgpt2_shape(meta=True)
    f32 = weights_bytes(model)
    f16 = weights_bytes(model.to(torch.float16))
    params = sum(p.numel() for p in model.parameters())
    return Evidence("true" if f16 * 2 == f32 else "false",
                    dict(params=params, f32_mb=round(f32 / 1e6, 1), f16_mb=round(f16 / 1e6, 1)))


@claim("backends-cuda-synchronize", f"{T3}，高级调试技巧 / DeviceDebugger", where="panel:report",
       quote="torch.backends.cuda.synchronize()",
       says=W("torch.backends.cuda.synchronize() waits for the GPU.", "torch.backends.cuda.synchronize() 会等待 GPU 完成。"),
       evidence=W(
           "Live: calling torch.backends.cuda.synchronize() raises \"{raised}\". The function is "
           "torch.cuda.synchronize() (present: {real}); torch.backends.cuda holds settings (matmul precision, "
           "attention kernels), not operations. The tutorial's DeviceDebugger fails on its first line.",
           "实测：调用 torch.backends.cuda.synchronize() 抛出 “{raised}”。正确的函数是 "
           "torch.cuda.synchronize()（存在：{real}）；torch.backends.cuda 放的是设置"
           "（矩阵乘法精度、注意力内核），不是操作。教程的 DeviceDebugger 在第一行就会失败。"))
def backends_synchronize() -> Evidence:
    # the tutorial's line, and the real function's name, run as the learner would type them
    try:
        exec(TUTORIAL_SYNC, {"torch": torch})
        raised = "(no error)"
    except AttributeError as e:
        raised = f"AttributeError: {e}"
    real = eval(REAL_SYNC, {"torch": torch})
    return Evidence("false" if raised.startswith("AttributeError") else "true", dict(raised=raised, real=real))


TUTORIAL_SYNC = "torch.backends.cuda.synchronize()"  # what the tutorial's DeviceDebugger calls
REAL_SYNC = "callable(getattr(torch.cuda, 'synchronize', None))"  # where the function really is


@claim("gpu-10-100x-faster", f"{T1}，总结 / 关键要点", where="panel:cmp-table",
       says=W("GPU inference is 10-100x faster than CPU.", "GPU 推理比 CPU 快 10-100 倍"),
       evidence=W(
           "This machine has no GPU. On a GPU host the Compare tab runs the same model on "
           "cpu and cuda:0 with the same prompt and token count; the ratio depends on the GPU, the model's size "
           "and the batch (a small model at batch 1 is bound by kernel launches, not arithmetic). What this CPU "
           "does is measured in the claim cpu-tokens-per-second.",
           "这台机器没有 GPU。在有 GPU 的机器上，“对比”页用同一个提示词和同样的 token 数，"
           "在 cpu 和 cuda:0 上运行同一个模型；比值取决于 GPU、模型大小和批大小"
           "（批大小为 1 的小模型受限于内核启动，而不是算力）。这台 CPU 的速度见 cpu-tokens-per-second 这一条。"))
def gpu_speedup() -> Evidence:
    return Evidence("not measurable here", live=False)


@claim("pcie-copy-20ms", f"{T1}，步骤 3 / 耗时估算", where="panel:report",
       says=W("Copying 330 MB over PCIe 3.0 takes about 20 ms; 0.5-2 s in total.",
              "数据传输：330 MB / 16 GB/s ≈ 20ms（PCIe 3.0）；实际总耗时：0.5-2 秒"),
       evidence=W(
           "No GPU, so no PCIe copy (model.to('cpu') on a CPU model copies nothing: claim "
           "cpu-to-is-noop). The arithmetic (330 MB at 16 GB/s is about 20 ms) is right; on a GPU host the "
           "Playground tab's migrate phase times model.to('cuda') with torch.cuda.synchronize() before the clock "
           "is read, which the tutorial's own timing code (time.time() around generate) does not do for .to().",
           "没有 GPU，也就没有 PCIe 复制（对 CPU 上的模型调用 model.to('cpu') 什么也不复制："
           "见 cpu-to-is-noop）。算术本身（330 MB 按 16 GB/s 约 20 毫秒）是对的；在有 GPU 的机器上，"
           "“游乐场”页的 migrate 阶段会为 model.to('cuda') 计时，并在读时钟之前调用 torch.cuda.synchronize()，"
           "教程自己的计时代码（在 generate 外面用 time.time()）对 .to() 并没有这样做。"))
def pcie_transfer() -> Evidence:
    return Evidence("not measurable here", live=False)


# in the order the page lists them
CLAIMS = (
    cpu_tokens_per_second, float16_half_size, backends_synchronize, gpu_speedup, pcie_transfer,
)
