"""The bundled model must be a real language model, not a placeholder.

(a) On 20k tokens of the two held-out plays, its cross-entropy beats an add-k
    bigram model counted on the training plays (the bigram gets its best k).
(b) 200 tokens sampled from 'ROMEO:' are mostly real words of the corpus; the
    same check on uniformly random tokens fails, so the check itself can fail.
"""

import gzip
import re

import numpy as np
import pytest
import torch

from playground.core.inputs import GenerationParams
from playground.core.paths import ASSETS
from playground.run.generation import stream

CORPUS = ASSETS / "corpus"
EVAL_TOKENS = 20_000


def _text(name: str) -> str:
    return gzip.decompress((CORPUS / name).read_bytes()).decode("utf-8")


def _words(text: str) -> list[str]:
    return [w.strip("'") for w in re.findall(r"[a-z']+", text.lower()) if w.strip("'")]


@pytest.fixture(scope="module")
def corpus():
    return _text("train.txt.gz"), _text("valid.txt.gz")


@pytest.mark.slow
def test_model_beats_bigram_on_held_out_plays(bundled, corpus):
    train, valid = corpus
    tok, model = bundled.tokenizer, bundled.model
    ctx = model.config.n_positions
    valid_ids = tok(valid)["input_ids"][: EVAL_TOKENS + 1]
    windows = [valid_ids[i : i + ctx] for i in range(0, len(valid_ids) - 1, ctx)]
    windows = [w for w in windows if len(w) > 1]

    # Model: mean cross-entropy of every token predicted inside each window.
    nll, count = 0.0, 0
    with torch.inference_mode():
        for w in windows:
            x = torch.tensor(w)[None]
            logits = model(x).logits[0, :-1].float()
            nll += torch.nn.functional.cross_entropy(logits, x[0, 1:], reduction="sum").item()
            count += len(w) - 1
    model_ce = nll / count

    # Add-k bigram on the training plays, scored on exactly the same predictions.
    V = len(tok)
    ids = np.array(tok(train)["input_ids"], dtype=np.int64)
    pair_codes, pair_counts = np.unique(ids[:-1] * V + ids[1:], return_counts=True)
    unigram = np.bincount(ids[:-1], minlength=V)
    prev = np.concatenate([np.array(w[:-1]) for w in windows])
    nxt = np.concatenate([np.array(w[1:]) for w in windows])
    codes = prev * V + nxt
    pos = np.clip(np.searchsorted(pair_codes, codes), 0, len(pair_codes) - 1)
    c_pair = np.where(pair_codes[pos] == codes, pair_counts[pos], 0)
    bigram_ce = min(
        float(-np.mean(np.log((c_pair + k) / (unigram[prev] + k * V)))) for k in (1.0, 0.1, 0.03, 0.01, 0.003, 0.001)
    )
    print(f"\nheld-out cross-entropy over {count} tokens: model {model_ce:.3f}, best add-k bigram {bigram_ce:.3f} nats/token")
    assert count >= EVAL_TOKENS - len(windows)
    assert model_ce < bigram_ce
    assert model_ce <= 5.0


@pytest.mark.slow
def test_sampled_words_are_real_words_and_random_tokens_are_not(bundled, corpus):
    vocab = set(_words(corpus[0]))
    *_, (text, stats) = stream(bundled.model, bundled.tokenizer, "cpu", "ROMEO:",
                               GenerationParams(max_new_tokens=200, temperature=0.8, top_p=1.0, seed=1234))
    words = _words(text)
    share = sum(w in vocab for w in words) / len(words)
    gen = torch.Generator().manual_seed(0)
    random_ids = torch.randint(0, len(bundled.tokenizer), (200,), generator=gen).tolist()
    rwords = _words(bundled.tokenizer.decode(random_ids))
    random_share = sum(w in vocab for w in rwords) / max(len(rwords), 1)
    print(f"\nsampled: {stats.new_tokens} tokens, {len(words)} words, {share:.1%} in corpus; random tokens: {random_share:.1%}")
    assert stats.new_tokens == 200 or stats.finish_reason == "eos"
    assert len(words) >= 50
    assert share >= 0.85
    assert random_share < 0.5
