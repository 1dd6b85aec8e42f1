"""One forward pass against `generate()`, on the same prompt: what each returns, and how often `generate()`
calls the model.

`forward_vs_generate(model, tokenizer, device, prompt, n)` times one `model(input_ids)` (logits for every
prompt position, no text) and `n` greedy tokens of `generate()` (`generation.generate_ids`, as the Speed tab's engines run it),
counting the model's forward calls with a hook removed afterwards, and says whether generate()'s first
token is the forward pass's highest-scoring next token.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import torch

from playground.hw import devices
from playground.run import generation


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

    def to_dict(self) -> dict:
        return asdict(self)


def forward_vs_generate(model, tokenizer, device: str, prompt: str, n: int) -> ForwardReport:
    enc = tokenizer(prompt, return_tensors="pt").to(device)
    with torch.inference_mode():
        devices.sync(device)
        t0 = time.perf_counter()
        logits = model(**enc).logits
        devices.sync(device)
        forward_s = time.perf_counter() - t0
    choice = int(logits[0, -1].argmax())
    calls = [0]

    def count(_module, _args, _out) -> None:
        calls[0] += 1

    hook = model.register_forward_hook(count)  # removed below: the pool's model is shared
    try:
        ids, stamps, n_prompt = generation.generate_ids(model, tokenizer, device, prompt, n)
    finally:
        hook.remove()
    return ForwardReport(n_prompt, list(logits.shape), forward_s, choice, len(ids), stamps[-1] if stamps else 0.0,
                         calls[0], bool(ids) and ids[0] == choice)
