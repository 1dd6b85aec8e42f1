"""Silent mistakes: nothing raises, so what they cost is measured (float16 on a CPU, no eval()/inference_mode()).

Timings are paired and interleaved until their spread is known (`playground.lab.timing`), and
the sentence shown beside them is chosen from the measurement, never written in advance.
"""

from __future__ import annotations

import os

import torch

from playground.core.i18n import W
from playground.hw import devices
from playground.hw.census import weights_bytes
from playground.lab import timing
from playground.lab.harness import Lab, row, run_fix, scenario
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script

_AGAIN = W("…its 95% confidence interval", "……它的 95% 置信区间")
_HALF = W("…the middle half of the rounds' ratios", "……各轮比值的中间一半")
LABELS = {
    "prompt_tokens": W("prompt tokens per forward pass", "每次前向传播的提示词 token 数"),
    "timed_runs_per_dtype": W("paired rounds (each timed once per round, in rotating order)",
                              "配对轮数（每轮各计时一次，顺序轮换）"),
    "statistic": W("statistic", "统计方式"),
    "float32_ms": W("float32: one forward pass, median (ms)", "float32：一次前向传播，中位数（毫秒）"),
    "float16_ms": W("float16: one forward pass, median (ms)", "float16：一次前向传播，中位数（毫秒）"),
    "bfloat16_ms": W("bfloat16: one forward pass, median (ms)", "bfloat16：一次前向传播，中位数（毫秒）"),
    "float16_vs_float32": W("float16 time ÷ float32 time in the same round, median",
                            "同一轮中 float16 用时 ÷ float32 用时，中位数"),
    "float16_vs_float32_interval": _AGAIN,
    "float16_vs_float32_middle_half": _HALF,
    "bfloat16_vs_float32": W("bfloat16 time ÷ float32 time in the same round, median",
                             "同一轮中 bfloat16 用时 ÷ float32 用时，中位数"),
    "bfloat16_vs_float32_interval": _AGAIN,
    "bfloat16_vs_float32_middle_half": _HALF,
    "cpu": W("CPU", "CPU"),
    "load_average": W("the machine's load average (1 min) when measured", "测量时整机的负载均值（1 分钟）"),
    "cpu_native_fp16": W("CPU has native float16", "CPU 原生支持 float16"),
    "cpu_native_bf16": W("CPU has native bfloat16", "CPU 原生支持 bfloat16"),
    "train_mode_logits_max_abs_diff": W("train mode: largest logit difference between two identical runs", "训练模式：两次相同运行之间 logits 的最大差值"),
    "train_mode_positions_with_different_top_token": W("train mode: positions whose top token changed", "训练模式：最高概率 token 改变的位置数"),
    "dropout_p": W("dropout probability in the model", "模型中的 dropout 概率"),
    "no_inference_mode_saved_tensors": W("without inference_mode: tensors kept for backward", "没有 inference_mode：为反向传播保留的张量数"),
    "no_inference_mode_saved_bytes": W("without inference_mode: memory kept for backward", "没有 inference_mode：为反向传播保留的内存"),
    "weights_bytes": W("the weights, for scale", "权重大小（作参照）"),
    "inference_mode_ms": W("eval + inference_mode: one forward pass, median (ms)",
                           "eval + inference_mode：一次前向传播，中位数（毫秒）"),
    "train_autograd_ms": W("train mode, autograd on: one forward pass, median (ms)",
                           "训练模式、记录计算图：一次前向传播，中位数（毫秒）"),
    "train_autograd_vs_inference_mode": W("train + autograd time ÷ eval + inference_mode time in the same round, median",
                                          "同一轮中“训练模式 + 计算图”用时 ÷ “eval + inference_mode”用时，中位数"),
    "train_autograd_vs_inference_mode_interval": _AGAIN,
    "train_autograd_vs_inference_mode_middle_half": _HALF,
    "fixed_logits_max_abs_diff": W("fixed: largest logit difference between two runs", "修复后：两次运行之间 logits 的最大差值"),
    "fixed_saved_bytes": W("fixed: memory kept for backward", "修复后：为反向传播保留的内存"),
}

# Shared by the scripts that time something: a clock read only after the device has finished.
TIMED = """
def timed(step):
    if device == "cuda":
        torch.cuda.synchronize()   # a GPU runs asynchronously: wait for it before reading the clock
    t0 = time.perf_counter()
    step()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0
"""


def _long_ids(lab: Lab, n: int):
    """The prompt's ids repeated to n tokens: enough work for a timing to mean something."""
    reps = -(-n // lab.ids.shape[1])
    return lab.ids.repeat(1, reps)[:, :n]


def _ratio_fields(key: str, ratio: timing.Ratio) -> dict:
    return {key: round(ratio.median, 2), f"{key}_interval": f"{ratio.low:.2f}–{ratio.high:.2f}",
            f"{key}_middle_half": f"{ratio.q1:.2f}–{ratio.q3:.2f}"}


def saved_for_backward(model, ids) -> tuple[int, int]:
    """(tensors, bytes) autograd keeps for backward in one forward pass, weights excluded, each storage once."""
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: set[int] = set()
    total = [0, 0]

    def pack(x):
        s = x.untyped_storage()
        if s.data_ptr() not in weights and s.data_ptr() not in seen:
            seen.add(s.data_ptr())
            total[0] += 1
            total[1] += s.nbytes()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        out = model(ids).logits
    del out
    return total[0], total[1]


@scenario(
    "fp16-on-cpu", 11,
    title=W("float16 on a CPU without native float16",
            "在没有原生 float16 的 CPU 上使用 float16"),
    explain=W(
        "Nothing fails. Most x86 CPUs have no float16 arithmetic: PyTorch converts float16 operands to "
        "float32 inside its kernels, computes, and converts back, so the model takes half the memory but "
        "each operator does extra work; how much that costs depends on the CPU and on the operator (some "
        "kernels convert once per block, some per element). bfloat16 is fast on a CPU only with "
        "AVX512-BF16 or AMX. Below, each dtype's copy of the model runs the same prompt in paired rounds "
        "on this machine, and the sentence under the table says what the measurement shows here.",
        "不会报错。大多数 x86 CPU 没有 float16 运算："
        "PyTorch 在内核里把 float16 操作数转成 float32 计算，再转回来，"
        "所以模型只占一半内存，但每个算子都多做了工作；代价有多大取决于 CPU 和算子"
        "（有的内核按块转换，有的按元素转换）。bfloat16 只有在支持 AVX512-BF16 或 AMX 的 CPU 上才快。"
        "下面，每种数据类型的模型副本在这台机器上用同一个提示词配对轮流运行，"
        "表格下面的句子说明这里实测的结果。",
    ),
    before="""
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float16)   # on a CPU
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
# bfloat16 only where the CPU has AVX512-BF16 / AMX (see the timings)
""",
    expect=Outcome(None),
    group="silent",
    silent=True,
    labels=LABELS,
    script=Script(
        "lm", imports="import time", helpers=TIMED,
        broken="""
model = model.to(device, torch.float16)   # float16, on a CPU without native float16
input_ids = tokenizer(prompt * 8, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    model(input_ids)                       # one warm-up pass
    seconds = min(timed(lambda: model(input_ids)) for _ in range(5))
print(f"float16 on {device}: one forward pass of {input_ids.shape[1]} tokens, fastest of 5: {seconds * 1000:.1f} ms")
""",
        fix="""
# float32 on a CPU (bfloat16 only with AVX512-BF16/AMX); bfloat16 on a GPU that supports it
fast = device == "cuda" and torch.cuda.is_bf16_supported()
dtype = torch.bfloat16 if fast else torch.float32
model = model.to(device, dtype)
input_ids = tokenizer(prompt * 8, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    model(input_ids)
    seconds = min(timed(lambda: model(input_ids)) for _ in range(5))
print(f"{dtype} on {device}: one forward pass of {input_ids.shape[1]} tokens, fastest of 5: {seconds * 1000:.1f} ms")
"""),
)
def fp16_on_cpu(lab: Lab, r: BreakResult, tokens: int = 16) -> None:
    ids = _long_ids(lab, tokens)
    models = {name: lab.copy().to(devices.TORCH_DTYPES[name]) for name in ("float32", "float16", "bfloat16")}
    with torch.inference_mode():
        ratios = timing.interleaved({name: (lambda m=m: m(ids)) for name, m in models.items()}, "float32")
    del models
    f16, bf16 = ratios["float16"], ratios["bfloat16"]
    r.measured = {
        "prompt_tokens": ids.shape[1], "timed_runs_per_dtype": f16.rounds, "statistic": "median of paired rounds",
        "float32_ms": round(f16.base_ms, 2), "float16_ms": round(f16.median_ms, 2),
        "bfloat16_ms": round(bf16.median_ms, 2),
        **_ratio_fields("float16_vs_float32", f16), **_ratio_fields("bfloat16_vs_float32", bf16),
        "cpu": devices.cpu_name(), "cpu_native_fp16": devices.cpu_native_fp16(),
        "cpu_native_bf16": devices.cpu_native_bf16(), "load_average": round(os.getloadavg()[0], 2),
    }
    r.findings = [f16.verdict(), bf16.verdict()]
    r.tensors = [row("input_ids", ids)]
    run_fix(lab, fp16_on_cpu, r)


@scenario(
    "eval-inference-forgotten", 12,
    title=W("Forgot model.eval() and torch.inference_mode()",
            "忘了 model.eval() 和 torch.inference_mode()"),
    explain=W(
        "Nothing fails either. Without `model.eval()` the dropout layers stay active, so the same prompt "
        "gives different logits on every run. Without `torch.inference_mode()` (or `no_grad()`) autograd "
        "records the graph and keeps the activations each operator would need for a backward pass that "
        "never comes. Both costs are measured below, and the time both cost together is timed in paired "
        "rounds. (`from_pretrained` returns a model already in eval mode: this happens to a model that "
        "was trained, or put in train mode, in the same process.)",
        "同样不会报错。没有 `model.eval()`，dropout 层保持开启，"
        "同一个提示词每次运行得到的 logits 都不同。"
        "没有 `torch.inference_mode()`（或 `no_grad()`），"
        "autograd 会记录计算图，并保留每个算子在反向传播时需要的激活值——而反向传播永远不会发生。"
        "两种代价都在下面实测，两者合起来的时间代价用配对轮次计时。"
        "（`from_pretrained` 返回的模型已经处于 eval 模式："
        "这种情况发生在同一个进程里训练过、或被切换到训练模式的模型上。）",
    ),
    before="""
model = AutoModelForCausalLM.from_pretrained(path)
model.train()                 # or a model left in training mode
logits = model(input_ids).logits
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path)
model.eval()                  # dropout off
with torch.inference_mode():  # no autograd graph, no saved activations
    logits = model(input_ids).logits
""",
    expect=Outcome(None),
    group="silent",
    silent=True,
    labels=LABELS,
    script=Script(
        "lm",
        broken="""
model = model.to(device)
model.train()                  # a model left in training mode (after fine-tuning, say)
input_ids = tokenizer(prompt * 8, return_tensors="pt").input_ids.to(device)
a = model(input_ids).logits    # dropout active, and autograd records the graph
b = model(input_ids).logits
print("two runs of one prompt identical:", torch.equal(a, b), "| autograd graph kept:", a.grad_fn is not None)
""",
        fix="""
model = model.to(device)
model.eval()                   # dropout off
input_ids = tokenizer(prompt * 8, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():   # no graph, no activations kept for a backward pass
    a = model(input_ids).logits
    b = model(input_ids).logits
print("two runs of one prompt identical:", torch.equal(a, b), "| autograd graph kept:", a.grad_fn is not None)
assert torch.equal(a, b) and a.grad_fn is None
"""),
)
def eval_inference_forgotten(lab: Lab, r: BreakResult, tokens: int = 32) -> None:
    ids = _long_ids(lab, tokens)
    trained = lab.copy().train()
    with torch.random.fork_rng(devices=[]), torch.inference_mode():
        a, b = trained(ids).logits, trained(ids).logits
    diff = float((a - b).abs().max())
    differ_at = int((a.argmax(-1) != b.argmax(-1)).sum())
    ref = lab.cpu_model()
    n_saved, bytes_saved = saved_for_backward(ref, ids)
    dropout = [float(m.p) for m in trained.modules() if isinstance(m, torch.nn.Dropout)]
    fixed_model = lab.copy().eval()

    def inference():
        with torch.inference_mode():
            fixed_model(ids)

    with torch.random.fork_rng(devices=[]):
        cost = timing.interleaved({"eval + inference_mode": inference, "train mode + autograd": lambda: trained(ids)},
                                  "eval + inference_mode")["train mode + autograd"]
    with torch.inference_mode():
        x, y = fixed_model(ids).logits, fixed_model(ids).logits
        _n, fixed_bytes = saved_for_backward(fixed_model, ids)
    r.measured = {
        "prompt_tokens": ids.shape[1],
        "train_mode_logits_max_abs_diff": round(diff, 6),
        "train_mode_positions_with_different_top_token": differ_at,
        "dropout_p": max(dropout) if dropout else 0.0,
        "no_inference_mode_saved_tensors": n_saved,
        "no_inference_mode_saved_bytes": bytes_saved,
        "weights_bytes": weights_bytes(ref),
        "timed_runs_per_dtype": cost.rounds,
        "inference_mode_ms": round(cost.base_ms, 2), "train_autograd_ms": round(cost.median_ms, 2),
        **_ratio_fields("train_autograd_vs_inference_mode", cost),
        "fixed_logits_max_abs_diff": float((x - y).abs().max()),
        "fixed_saved_bytes": fixed_bytes, "load_average": round(os.getloadavg()[0], 2),
    }
    r.findings = [cost.verdict()]
    r.tensors = [row("input_ids", ids), row("logits", a, "ui.row.train_mode")]
    run_fix(lab, eval_inference_forgotten, r)


SCENARIOS = (fp16_on_cpu, eval_inference_forgotten)
