"""The loop generate() runs inside, written once: a prefill, then one forward pass per new token.

Phases in execution order, named as in pytorch-labs/gpt-fast's generate.py: `prefill` runs the whole prompt
in one forward pass; `choose` picks the next token from the last position's logits (greedy or sampled, as
generate() does); `decode_one_token` runs one more forward pass (with the KV cache: the newest token alone);
`decode_n_tokens` alternates the two and hands over each token with the time it arrived; `generate_tokens`
is the whole. For one greedy sequence the tokens are generate()'s, token for token.

The manual engine (run/decode.py), the KV growth (run/kvcache.py) and the engines' parting (run/engines.py)
run these functions, and the page's code to copy is their source (web/snippet.py): this module imports
only the standard library, torch and Transformers, so that its text runs as written. See docs/generation.md.
"""

import functools
import inspect
import time

import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopPLogitsWarper


def eos_ids(model) -> frozenset:
    """The ids generate() stops at: `generation_config.eos_token_id`, one id or a list (Llama-3 and Qwen
    instruct models list several: end of text, end of turn)."""
    eos = model.generation_config.eos_token_id
    if eos is None:
        return frozenset()
    return frozenset(int(i) for i in eos) if isinstance(eos, (list, tuple)) else frozenset({int(eos)})


def warpers_for(temperature: float, top_p: float):
    """None for greedy decoding (temperature 0); else the logits warpers generate() applies for this
    temperature and top_p (the same classes, in the same order)."""
    if temperature == 0:
        return None
    warpers = [TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []
    if top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p))
    return warpers


@functools.cache
def _takes_logits_to_keep(forward) -> bool:
    return "logits_to_keep" in inspect.signature(forward).parameters


def last_logits_only(model) -> dict:
    """`logits_to_keep=1` where the model accepts it, as generate() passes it: the LM head then scores the
    last position only, a [batch, 1, vocab] tensor instead of one row per position (the only row a next
    token needs). Read once per model class: inspecting a signature costs more than a small model's step."""
    return {"logits_to_keep": 1} if _takes_logits_to_keep(type(model).forward) else {}


# inference_mode: no autograd graph is recorded and no tensor keeps a version counter: the cheapest way to
# run a model that is not being trained. Tensors made inside (the logits, the cache) cannot be used to
# train later; reading them outside, as `choose` does, is fine.
@torch.inference_mode()
def prefill(model, ids: torch.Tensor, mask: torch.Tensor | None, use_cache: bool = True, cache=None):
    """The whole prompt in one forward pass: (logits of the last position, the cache or None).

    With `use_cache` the model returns every layer's keys and values for every prompt position in the cache
    object (`past_key_values`: the `cache` given, e.g. a DynamicCache made to be read afterwards, or one it
    makes); without, it keeps nothing and each later step must run the whole sequence again."""
    out = model(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=use_cache,
                **last_logits_only(model))
    return out.logits, out.past_key_values if use_cache else None


def choose(logits: torch.Tensor, seq: torch.Tensor, warpers=None) -> torch.Tensor:
    """The next token id, [batch, 1], from the last position's logits: the highest score (greedy,
    `warpers` None), or a draw from the softmax after the warpers (temperature, top-p), as generate()
    draws it with torch's generator (`torch.manual_seed` makes it repeat). `seq`: the ids so far."""
    scores = logits[:, -1, :].to(torch.float32)  # generate() upcasts before choosing: float16 ties break alike
    if warpers is None:
        return scores.argmax(dim=-1, keepdim=True)
    for warp in warpers:
        scores = warp(seq, scores)
    return torch.multinomial(torch.softmax(scores, dim=-1), num_samples=1)


@torch.inference_mode()
def decode_one_token(model, seq: torch.Tensor, mask: torch.Tensor | None, cache):
    """One forward pass for the next position: (its logits, the cache or None).

    With a cache only the newest token goes in: the cache holds the keys and values of all the others,
    and this step appends the new token's, in place (the same object comes back, one token longer).
    Without (`cache` None) the whole sequence goes in again, prompt included: step n costs more than
    step n - 1, and a whole generation O(n^2)."""
    if cache is None:
        out = model(input_ids=seq, attention_mask=mask, use_cache=False, **last_logits_only(model))
        return out.logits, None
    out = model(input_ids=seq[:, -1:], attention_mask=mask, past_key_values=cache, use_cache=True,
                **last_logits_only(model))
    return out.logits, out.past_key_values


def decode_n_tokens(model, logits: torch.Tensor, seq: torch.Tensor, mask: torch.Tensor | None, cache, n: int,
                    eos=frozenset(), warpers=None):
    """From the prefill's `logits`: choose a token, hand it over as (token id, `time.perf_counter()` when it
    arrived), run `decode_one_token`, again; until `n` tokens, or one of the `eos` ids.

    A generator does no work until asked for the next token: a caller stops it by leaving its loop."""
    for i in range(n):
        next_id = choose(logits, seq, warpers)
        # .item() copies the id to the CPU, so it waits for the device to finish every kernel queued
        # before it: the clock read after it is honest on a GPU too.
        token = next_id.item()
        yield token, time.perf_counter()
        if token in eos or i + 1 == n:
            return
        # the chosen id joins the sequence (on the inputs' device: with layers spread over devices by
        # Accelerate, the logits come from the last one) and the mask grows by one position
        seq = torch.cat([seq, next_id.to(seq.device)], dim=-1)
        if mask is not None:
            mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=-1)
        logits, cache = decode_one_token(model, seq, mask, cache)


def generate_tokens(model, ids: torch.Tensor, mask: torch.Tensor | None, max_new_tokens: int, eos=frozenset(),
                    warpers=None, use_cache: bool = True, cache=None):
    """`prefill`, then `decode_n_tokens`: yields (token id, time it arrived) for up to `max_new_tokens` new
    tokens, ending at one of the `eos` ids. `warpers`: None for greedy (see `warpers_for`); `use_cache`:
    the KV cache, or the whole sequence recomputed every step; `cache`: an empty cache object to fill."""
    logits, cache = prefill(model, ids, mask, use_cache, cache)
    yield from decode_n_tokens(model, logits, ids, mask, cache, max_new_tokens, eos, warpers)
