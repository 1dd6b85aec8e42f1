"""One forward pass against `generate()`, on the same prompt: what each returns, and how often `generate()`
calls the model.

`forward_vs_generate(model, tokenizer, device, prompt, n)` times one `model(input_ids)` (logits for every
prompt position, no text) and `n` greedy tokens of `generate()` (`generation.generate_ids`, as the Speed tab's engines run it),
each after an untimed warm-up run of its own (the first call pays one-time costs: kernels chosen, buffers
allocated, weights paged in), counting the model's forward calls in the timed generate() with a hook
removed afterwards, and says whether generate()'s first token is the forward pass's highest-scoring one.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch

from playground.hw import devices
from playground.run import generation


WARMUP_TOKENS = 2  # generate()'s warm-up: the prefill and one decode step, each kind of pass once


@dataclass
class ForwardReport:
    prompt_tokens: int
    logits_shape: list[int]  # [batch, positions, vocabulary]
    forward_seconds: float
    argmax_token: int  # the forward pass's choice for the next token (its last position's highest logit)
    new_tokens: int
    generate_seconds: float  # until generate() handed over its last token
    forward_calls: int  # the model's forward passes during generate(): one per new token
    same_first_token: bool
    # the model's forward passes in the untimed warm-up run of each side, before its timed one
    warmup_forward_passes: int = 0
    warmup_generate_passes: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def forward_vs_generate(model, tokenizer, device: str, prompt: str, n: int) -> ForwardReport:
    """Each side warmed up untimed, then timed: a cold first call against a warm loop would compare nothing."""
    enc = tokenizer(prompt, return_tensors="pt").to(device)
    passes = dict.fromkeys(("forward warm-up", "forward", "generate warm-up", "generate"), 0)
    phase = "forward warm-up"

    def count(_module, _args, _out) -> None:
        passes[phase] += 1

    hook = model.register_forward_hook(count)  # removed below: the pool's model is shared
    try:
        with torch.inference_mode():
            model(**enc)  # untimed
            phase = "forward"
            devices.sync(device)
            t0 = time.perf_counter()
            logits = model(**enc).logits
            devices.sync(device)
            forward_s = time.perf_counter() - t0
        choice = int(logits[0, -1].argmax())
        phase = "generate warm-up"
        generation.generate_ids(model, tokenizer, device, prompt, min(n, WARMUP_TOKENS))  # untimed
        phase = "generate"
        ids, stamps, n_prompt = generation.generate_ids(model, tokenizer, device, prompt, n)
    finally:
        hook.remove()
    return ForwardReport(n_prompt, list(logits.shape), forward_s, choice, len(ids), stamps[-1] if stamps else 0.0,
                         passes["generate"], bool(ids) and ids[0] == choice, passes["forward warm-up"],
                         passes["generate warm-up"])
