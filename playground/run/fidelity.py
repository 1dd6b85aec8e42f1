"""What a dtype changes, measured: its tokens and logits against float32's on the same prompt, and where its decode
time goes.

`reference(model, tokenizer, device, prompt, n)` runs the float32 model's greedy continuation (`loop.generate_tokens`,
the loop the page runs) and keeps, per position, its logits. `against(model, device, ref)` feeds another model the
same sequence in one forward pass (teacher-forced: every position sees float32's tokens before it, so one changed
choice does not change every later one) and counts the positions whose highest-scoring token is float32's, with the
largest logit difference at each. `top_ops(...)` profiles `n` decode steps and names the operators that took the
time, per token. See docs/dtypes.md.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field

import torch
from torch.profiler import ProfilerActivity, profile

from playground.hw import devices
from playground.run import loop


@dataclass
class Reference:
    """float32's greedy tokens on the prompt, and its logits at each generated position (float32, on the CPU)."""

    prompt_ids: list[int]
    tokens: list[int]
    logits: torch.Tensor  # [len(tokens), vocab]
    dtype: str = "float32"
    pair: str = ""  # the Compare row it came from


@dataclass
class Agreement:
    reference: str  # the pair the tokens are compared with ("cpu/float32")
    compared: int  # positions compared: the reference's new tokens
    same: int  # positions where this model's top token is the reference's
    first_change: int | None  # the first position where it is not (None: none)
    logit_diff: list[float] = field(default_factory=list)  # per position: max |logit - reference logit|
    logit_diff_median: float = 0.0
    logit_diff_max: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@torch.inference_mode()
def _teacher_forced(model, device: str, prompt_ids: list[int], tokens: list[int]) -> torch.Tensor:
    """One forward pass over the prompt and `tokens` but the last: the logits that chose each of `tokens`."""
    ids = torch.tensor([prompt_ids + tokens[:-1]], device=device)
    logits = model(input_ids=ids).logits[0, len(prompt_ids) - 1:]
    return logits.float().cpu()


def reference(model, tokenizer, device: str, prompt: str, n: int, pair: str = "") -> Reference:
    """The reference model's `n` greedy tokens (no end-of-text stop: every dtype is compared over the same `n`) and
    the logits that chose each, computed again teacher-forced, as `against` computes the others'."""
    ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
    tokens = [tok for tok, _at in loop.generate_tokens(model, ids, None, n)]
    prompt_ids = ids[0].tolist()
    return Reference(prompt_ids, tokens, _teacher_forced(model, device, prompt_ids, tokens), pair=pair)


def against(model, device: str, ref: Reference) -> Agreement:
    """How this model's choices and logits differ from the reference's at each of its positions."""
    logits = _teacher_forced(model, device, ref.prompt_ids, ref.tokens)
    top = logits.argmax(dim=-1).tolist()
    same = [a == b for a, b in zip(top, ref.tokens)]
    diff = (logits - ref.logits).abs().amax(dim=-1).tolist()
    return Agreement(reference=ref.pair, compared=len(ref.tokens), same=sum(same),
                     first_change=next((i for i, s in enumerate(same) if not s), None),
                     logit_diff=[round(d, 4) for d in diff], logit_diff_median=statistics.median(diff) if diff else 0.0,
                     logit_diff_max=max(diff, default=0.0))


TOP = 5  # operators named per row
# operators that turn stored values into another dtype: what a weight-only quantized model adds to every step
CONVERSIONS = frozenset({"aten::copy_", "aten::to", "aten::_to_copy", "torchao::dequantize_affine"})


def top_ops(model, tokenizer, device: str, prompt: str, n: int = 8) -> dict:
    """`n` decode steps (after an untimed prefill and step) under torch.profiler: the operators that took the most
    self time, in ms per token, and the whole decode's ms per token. On a GPU, device time is counted."""
    on_gpu = devices.kind_of(device) == "cuda"
    ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    with torch.inference_mode():
        logits, cache = loop.prefill(model, ids, None)
        steps = loop.decode_n_tokens(model, logits, ids, None, cache, n + 2)
        next(steps), next(steps)  # the first choice and one cached step, untimed: one-time costs paid
        with profile(activities=acts) as prof:
            done = sum(1 for _ in steps)

    def spent(e) -> float:
        us = getattr(e, "self_device_time_total", None) if on_gpu else e.self_cpu_time_total
        return (us or 0) / 1e3

    events = sorted(prof.key_averages(), key=spent, reverse=True)
    per = max(done, 1)  # each of them came from one cached decode step, run inside the profile
    total = sum(spent(e) for e in events)
    convert = sum(spent(e) for e in events if e.key in CONVERSIONS)
    return dict(tokens=per, ms_per_token=total / per, convert_ms_per_token=convert / per,
                ops=[dict(op=e.key, ms_per_token=spent(e) / per, share=spent(e) / total if total else 0.0)
                     for e in events[:TOP]])
