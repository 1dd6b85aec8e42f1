"""The decode core: its phases keep the cache in one object, stop where they are told, and need nothing but
torch and Transformers (the code to copy is their source)."""

from __future__ import annotations

import ast
import inspect

import pytest
import torch

from playground.run import loop

PROMPT = "ROMEO: Is the day so young?"

pytestmark = pytest.mark.usefixtures("one_thread")


def _ids(tokenizer):
    return tokenizer(PROMPT, return_tensors="pt")["input_ids"]


def test_the_cache_is_one_object_one_token_longer_per_step_and_only_the_last_logits_come_back(bundled):
    model, ids = bundled.model, _ids(bundled.tokenizer)
    vocab = model.config.vocab_size
    logits, cache = loop.prefill(model, ids, None)
    assert logits.shape == (1, 1, vocab)  # logits_to_keep=1: the last position only, as generate() asks
    assert cache.get_seq_length() == ids.shape[-1]
    seq = torch.cat([ids, loop.choose(logits, ids)], dim=-1)
    logits, again = loop.decode_one_token(model, seq, None, cache)
    assert again is cache and cache.get_seq_length() == seq.shape[-1]  # appended in place
    full, none = loop.decode_one_token(model, seq, None, None)  # no cache: the whole sequence again
    assert none is None and full.shape == (1, 1, vocab)
    assert torch.allclose(full, logits, atol=1e-4)  # the same position's logits, two ways (float32)


def test_choose_takes_the_last_positions_argmax_or_a_seeded_draw():
    logits = torch.tensor([[[0.0, 3.0, 1.0], [5.0, 0.0, 1.0]]], dtype=torch.bfloat16)  # two positions
    assert loop.choose(logits, torch.zeros(1, 1, dtype=torch.long)).tolist() == [[0]]  # the last one's, [batch, 1]
    assert loop.warpers_for(0.0, 0.5) is None
    warpers = loop.warpers_for(0.7, 0.9)
    assert [type(w).__name__ for w in warpers] == ["TemperatureLogitsWarper", "TopPLogitsWarper"]
    draws = []
    for _ in range(2):
        torch.manual_seed(3)
        draws.append([int(loop.choose(torch.randn(1, 1, 50), torch.zeros(1, 1, dtype=torch.long), warpers))
                      for _ in range(5)])
    assert draws[0] == draws[1]


def test_the_loop_stops_at_the_budget_at_an_end_id_and_where_its_caller_leaves(bundled):
    model, ids = bundled.model, _ids(bundled.tokenizer)
    passes = []
    hook = model.register_forward_hook(lambda *a: passes.append(1))
    try:
        got = list(loop.generate_tokens(model, ids, None, 6))
        assert len(got) == 6 and len(passes) == 6  # one prefill, five decode steps: the last token is not fed
        times = [t for _, t in got]
        assert times == sorted(times)
        tokens = [tok for tok, _ in got]
        assert [tok for tok, _ in loop.generate_tokens(model, ids, None, 6, eos={tokens[2]})] == tokens[:3]
        passes.clear()
        for k, _ in enumerate(loop.generate_tokens(model, ids, None, 50)):
            if k == 2:
                break  # a generator does no work until asked: three tokens, three forward passes
        assert len(passes) == 3
    finally:
        hook.remove()


def test_eos_ids_read_one_id_or_a_list(bundled):
    config = bundled.model.generation_config
    saved = config.eos_token_id
    try:
        for value, want in ((7, {7}), ([7, 9], {7, 9}), (None, set())):
            config.eos_token_id = value
            assert loop.eos_ids(bundled.model) == want
    finally:
        config.eos_token_id = saved


def test_the_core_imports_only_what_a_learners_script_has():
    """The code to copy is this module's source: it may import the standard library, torch and Transformers,
    never the playground."""
    tree = ast.parse(inspect.getsource(loop))
    names = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert {name.split(".")[0] for name in names} <= {"functools", "inspect", "time", "torch", "transformers"}
    assert all(isinstance(n, (ast.Expr, ast.Import, ast.ImportFrom, ast.FunctionDef)) for n in tree.body)
