"""Silent mistakes: nothing raises, so what they cost is measured (float16 on a CPU, no eval()/inference_mode())."""

from __future__ import annotations

import time

import torch

from playground.core.i18n import W
from playground.hw import devices
from playground.hw.memory import weights_bytes
from playground.lab.capture import fix
from playground.lab.harness import NEW_TOKENS, Lab, greedy, row, scenario
from playground.lab.result import BreakResult


LABELS = {
    "prompt_tokens": W("prompt tokens per forward pass", "每次前向传播的提示词 token 数"),
    "timed_runs_per_dtype": W("timed runs per dtype", "每种数据类型的计时次数"),
    "statistic": W("statistic", "统计方式"),
    "float32_ms": W("float32: one forward pass (ms)", "float32：一次前向传播（毫秒）"),
    "float16_ms": W("float16: one forward pass (ms)", "float16：一次前向传播（毫秒）"),
    "bfloat16_ms": W("bfloat16: one forward pass (ms)", "bfloat16：一次前向传播（毫秒）"),
    "float16_vs_float32": W("float16 time ÷ float32 time", "float16 用时 ÷ float32 用时"),
    "bfloat16_vs_float32": W("bfloat16 time ÷ float32 time", "bfloat16 用时 ÷ float32 用时"),
    "cpu": W("CPU", "CPU"),
    "cpu_native_fp16": W("CPU has native float16", "CPU 原生支持 float16"),
    "cpu_native_bf16": W("CPU has native bfloat16", "CPU 原生支持 bfloat16"),
    "train_mode_logits_max_abs_diff": W("train mode: largest logit difference between two identical runs", "训练模式：两次相同运行之间 logits 的最大差值"),
    "train_mode_positions_with_different_top_token": W("train mode: positions whose top token changed", "训练模式：最高概率 token 改变的位置数"),
    "dropout_p": W("dropout probability in the model", "模型中的 dropout 概率"),
    "no_inference_mode_saved_tensors": W("without inference_mode: tensors kept for backward", "没有 inference_mode：为反向传播保留的张量数"),
    "no_inference_mode_saved_bytes": W("without inference_mode: memory kept for backward", "没有 inference_mode：为反向传播保留的内存"),
    "weights_bytes": W("the weights, for scale", "权重大小（作参照）"),
    "fixed_logits_max_abs_diff": W("fixed: largest logit difference between two runs", "修复后：两次运行之间 logits 的最大差值"),
    "fixed_saved_bytes": W("fixed: memory kept for backward", "修复后：为反向传播保留的内存"),
}


def _forward_ms(models: dict, ids, reps: int) -> dict[str, float]:
    """Fastest of `reps` forward passes per model, in milliseconds, after one warm-up each.

    The models take turns (A B C A B C ...) so that a burst of load from other
    processes hits them alike, and the minimum is kept: noise only ever adds time.
    """
    best = {name: float("inf") for name in models}
    with torch.inference_mode():
        for m in models.values():
            m(ids)
        for _ in range(reps):
            for name, m in models.items():
                dev = devices.torch_device_of(m)
                devices.sync(dev)
                t0 = time.perf_counter()
                m(ids)
                devices.sync(dev)
                best[name] = min(best[name], (time.perf_counter() - t0) * 1000)
    return best


def _long_ids(lab: Lab, n: int):
    """The prompt's ids repeated to n tokens: enough work for a timing to mean something."""
    reps = -(-n // lab.ids.shape[1])
    return lab.ids.repeat(1, reps)[:, :n]


def _greedy_inference(model, ids):
    with torch.inference_mode():
        return greedy(model, ids)


def _saved_for_backward(model, ids) -> tuple[int, int]:
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
        "Nothing fails. Most x86 CPUs have no float16 arithmetic: PyTorch converts each float16 operand "
        "to float32, computes, and converts back, so the model uses half the memory but runs several "
        "times slower than in float32. bfloat16 is fast on a CPU only with AVX512-BF16 or AMX. The "
        "numbers below were measured on this machine, on the same prompt.",
        "不会报错。大多数 x86 CPU 没有 float16 运算："
        "PyTorch 把每个 float16 操作数转成 float32，计算后再转回来，"
        "所以模型只占一半内存，却比 float32 慢好几倍。"
        "bfloat16 只有在支持 AVX512-BF16 或 AMX 的 CPU 上才快。"
        "下面的数字是在这台机器上、用同一个提示词实测的。",
    ),
    before="""
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float16)   # on a CPU
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
# bfloat16 only where the CPU has AVX512-BF16 / AMX (see the timings)
""",
    silent=True,
    labels=LABELS,
)
def fp16_on_cpu(lab: Lab, r: BreakResult, tokens: int = 16, reps: int = 3) -> None:
    ids = _long_ids(lab, tokens)
    models = {name: lab.copy().to(devices.TORCH_DTYPES[name]) for name in ("float32", "float16", "bfloat16")}
    ms = _forward_ms(models, ids, reps)
    del models
    r.measured = {
        "prompt_tokens": ids.shape[1], "timed_runs_per_dtype": reps, "statistic": "fastest run",
        "float32_ms": round(ms["float32"], 2), "float16_ms": round(ms["float16"], 2),
        "bfloat16_ms": round(ms["bfloat16"], 2),
        "float16_vs_float32": round(ms["float16"] / ms["float32"], 2),
        "bfloat16_vs_float32": round(ms["bfloat16"] / ms["float32"], 2),
        "cpu": devices.cpu_name(), "cpu_native_fp16": devices.cpu_native_fp16(),
        "cpu_native_bf16": devices.cpu_native_bf16(),
    }
    r.tensors = [row("input_ids", ids)]

    def fixed():
        m = lab.cpu_model()
        return True, lab.text(m, _greedy_inference(m, lab.ids)), NEW_TOKENS

    fix(r, fixed)


@scenario(
    "eval-inference-forgotten", 12,
    title=W("Forgot model.eval() and torch.inference_mode()",
            "忘了 model.eval() 和 torch.inference_mode()"),
    explain=W(
        "Nothing fails either. Without `model.eval()` the dropout layers stay active, so the same prompt "
        "gives different logits on every run. Without `torch.inference_mode()` (or `no_grad()`) autograd "
        "records the graph and keeps the activations each operator would need for a backward pass that "
        "never comes. Both costs are measured below.",
        "同样不会报错。没有 `model.eval()`，dropout 层保持开启，"
        "同一个提示词每次运行得到的 logits 都不同。"
        "没有 `torch.inference_mode()`（或 `no_grad()`），"
        "autograd 会记录计算图，并保留每个算子在反向传播时需要的激活值——而反向传播永远不会发生。"
        "两种代价都在下面实测。",
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
    silent=True,
    labels=LABELS,
)
def eval_inference_forgotten(lab: Lab, r: BreakResult, tokens: int = 32) -> None:
    ids = _long_ids(lab, tokens)
    trained = lab.copy().train()
    with torch.random.fork_rng(devices=[]), torch.inference_mode():
        a, b = trained(ids).logits, trained(ids).logits
    diff = float((a - b).abs().max())
    differ_at = int((a.argmax(-1) != b.argmax(-1)).sum())
    ref = lab.cpu_model()
    n_saved, bytes_saved = _saved_for_backward(ref, ids)
    dropout = [float(m.p) for m in trained.modules() if isinstance(m, torch.nn.Dropout)]
    r.measured = {
        "prompt_tokens": ids.shape[1],
        "train_mode_logits_max_abs_diff": round(diff, 6),
        "train_mode_positions_with_different_top_token": differ_at,
        "dropout_p": max(dropout) if dropout else 0.0,
        "no_inference_mode_saved_tensors": n_saved,
        "no_inference_mode_saved_bytes": bytes_saved,
        "weights_bytes": weights_bytes(ref),
    }
    r.tensors = [row("input_ids", ids), row("logits (train mode)", a)]

    def fixed():
        fixed_model = trained.eval()
        with torch.inference_mode():
            x, y = fixed_model(ids).logits, fixed_model(ids).logits
            n, nbytes = _saved_for_backward(fixed_model, ids)
        r.measured["fixed_logits_max_abs_diff"] = float((x - y).abs().max())
        r.measured["fixed_saved_bytes"] = nbytes
        ok = torch.equal(x, y) and nbytes == 0
        same = torch.equal(x, y)
        return ok, f"eval + inference_mode: two runs identical: {same}; bytes saved for backward: {nbytes}", None

    fix(r, fixed)


SCENARIOS = (fp16_on_cpu, eval_inference_forgotten)
