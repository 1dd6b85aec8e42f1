"""Decode engines side by side: the same greedy tokens, each rate against the read-bandwidth bound."""

from __future__ import annotations

import pytest
import torch

from playground.core import threads
from playground.core.errors import UserError
from playground.core.paths import BUNDLED_NAME
from playground.hw import devices
from playground.load import loader
from playground.core.inputs import GenerationParams
from playground.run import decode, engines, generation
from playground.run.agreement import dtype_tolerance, greedy_agreement

TOKENS = 32


def test_rows_compare_token_by_token_and_do_the_bound_arithmetic():
    bound = 1000.0
    ref = [5, 6, 7, 8]
    same = engines.make_row("a", ref, [0.1, 0.2, 0.3, 0.4], ref, bound)
    assert same.same_tokens_as_generate and same.first_difference is None
    assert same.tokens_per_second == pytest.approx(3 / 0.3)
    assert same.percent_of_bound == pytest.approx(100 * 10 / 1000)
    assert same.overhead_ms_per_token == pytest.approx(100 - 1)  # 100 ms a token, of which 1 ms reads the weights
    differ = engines.make_row("b", [5, 6, 9, 8], [0.1, 0.2, 0.3, 0.4], ref, bound)
    assert not differ.same_tokens_as_generate and differ.first_difference == 2
    short = engines.make_row("c", [5, 6], [0.1, 0.2], ref, bound)
    assert short.first_difference == 2  # stopped early: the lengths differ
    assert engines.make_row("d", [5], [0.1], ref, bound).tokens_per_second is None  # one token: no decode rate


@pytest.mark.parametrize("share, key", [(0.27, "eng.limit.overhead"), (0.85, "eng.limit.bandwidth")])
def test_what_limits_an_engine_follows_its_profile(share, key):
    row = engines.make_row("generate", [1, 2, 3], [0.0, 0.01, 0.02], None, 1000.0)
    prof = dict(tokens=16, matmul_share=share, matmul_gbps=22.0,
                largest_others=[dict(op="aten::tanh", seconds=0.012), dict(op="aten::add", seconds=0.004)])
    said = engines.limit_of(row, prof, 70.0)
    assert said.key == key and f"{100 * share:.0f}%" in said.text("en") and said.text("zh") != said.text("en")
    if key == "eng.limit.overhead":
        assert "`aten::tanh` 12 ms" in said.text("en")
    else:
        assert "22.0 GB/s where a streaming read reaches 70.0 GB/s" in said.text("en")


def test_the_profile_counts_the_matmuls_of_a_real_generate(bundled, one_thread):
    p = engines.matmul_profile(bundled.model, bundled.tokenizer, "cpu", engines.PROMPT, 8)
    assert p["tokens"] == 8 and 0 < p["matmul_seconds"] < p["wall_seconds"]
    assert 0 < p["matmul_share"] < 1 and p["matmul_gbps"] > 0 and len(p["largest_others"]) == 3


@pytest.mark.slow
@pytest.mark.device
def test_generate_and_manual_loops_choose_the_same_tokens(bundled, one_thread, figures):
    """`generate()` and the manual prefill/decode loop, with and without the KV cache, choose the same greedy
    tokens on the CPU; each one's decode rate measured (one thread)."""
    r = engines.run(bundled.model, bundled.tokenizer, "cpu", 24, False, "bundled")
    figures.update({f"{row.engine} tokens/s": row.tokens_per_second for row in r.rows},
                   new_tokens=r.rows[0].new_tokens, threads=1)
    assert [row.engine for row in r.rows] == list(generation.ENGINES)
    assert all(row.same_tokens_as_generate and row.new_tokens == 24 for row in r.rows)
    assert r.bound_tokens_per_second == pytest.approx(r.read["gbps"] * 1e9 / r.weights_bytes)
    assert r.weights_in_cache == (r.last_level_cache_bytes is not None and r.weights_bytes <= r.last_level_cache_bytes)
    d = r.to_dict()
    assert isinstance(d["limit"], str) and d["rows"][0]["compile_seconds"] is None  # nothing compiles
    assert r.limit.key in ("eng.limit.overhead", "eng.limit.bandwidth") and r.profile["tokens"] == 16


@pytest.mark.slow
def test_where_the_cache_less_loop_parts_from_generate_the_parting_says_why(one_thread):
    """In bfloat16 the cache-less loop chose other tokens than generate() from some token on, with no word on why
    (the README said they match). A full recompute and a cached step round differently, and greedy decoding then
    flips a near-tie. `parting` measures both at the first differing position; the same measurement in float32
    shows the paths agreeing to the last bits, and in bfloat16 apart by whole rounding steps."""
    gaps = {}
    for dtype in ("float32", "bfloat16"):
        lm = loader.load(loader.prepare(*loader.parse(BUNDLED_NAME, "cpu", dtype)))
        ref, _, _ = generation.generate_ids(lm.model, lm.tokenizer, "cpu", engines.PROMPT, TOKENS)
        greedy = GenerationParams(max_new_tokens=TOKENS, temperature=0.0, top_p=1.0, seed=0)
        _, st = decode.run(lm.model, lm.tokenizer, "cpu", engines.PROMPT, greedy, use_cache=False)
        row = engines.make_row("manual-nocache", st.token_ids, [0.0] * len(st.token_ids), ref, 1.0)
        at = row.first_difference if row.first_difference is not None else TOKENS // 2
        p = engines.parting(lm.model, lm.tokenizer, "cpu", engines.PROMPT, ref, st.token_ids, at)
        gaps[dtype] = p["gap"]
        if row.first_difference is not None:  # it parted: a near-tie the other rounding flipped, as said
            assert abs(p["margin"]) <= p["gap"] and p["other_leads_in_full"], (dtype, p)
        else:
            assert p["margin"] == 0.0 and p["chosen"] == p["other"]
    assert gaps["float32"] < 1e-3 and gaps["bfloat16"] > 100 * gaps["float32"], gaps


def test_a_budget_beyond_the_context_is_refused_before_any_work(bundled):
    with pytest.raises(UserError, match="context"):
        engines.run(bundled.model, bundled.tokenizer, "cpu", 400, False)  # the bundled model holds 256


@pytest.mark.slow
def test_a_compile_that_fails_is_said_with_the_libraries_words(bundled, one_thread, monkeypatch):
    from playground.run import compiled

    def no_compiler(*a, **k):
        raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx")

    r = engines.run(bundled.model, bundled.tokenizer, "cpu", 8, False, "bundled")
    monkeypatch.setattr(compiled, "run", no_compiler)
    with pytest.raises(UserError) as e:
        engines.add_compiled(r, bundled.model, bundled.tokenizer)
    assert "could not compile" in str(e.value) and "No working C++ compiler" in str(e.value)
    assert "无法编译" in e.value.text("zh") and len(r.rows) == 3  # the other rows stand


def greedy(pool, device: str, dtype: str, runs: int = 1) -> tuple[list[int], float | None, int]:
    """Load the bundled model through `pool`, then generate() greedy TOKENS tokens `runs` times (the last
    one counts): (new token ids, decode tokens/s, prompt tokens)."""
    pool.load(*loader.parse(BUNDLED_NAME, device, dtype))
    with pool.held() as lm:
        for _ in range(runs):
            ids, stamps, n_prompt = threads.run(generation.generate_ids, lm.model, lm.tokenizer, lm.device,
                                                engines.PROMPT, TOKENS)
    return ids, (len(ids) - 1) / (stamps[-1] - stamps[0]) if len(ids) > 1 else None, n_prompt


@pytest.mark.slow
@pytest.mark.device(kinds=("cpu", "cuda"))
def test_each_dtype_generates_and_its_decode_rate_is_measured(device, pool, figures):
    """float32, float16 and bfloat16 all generate on the device (bfloat16 on a GPU only where it has bfloat16
    support); their decode rates side by side (a CPU without native float16 converts it to float32 inside)."""
    info = devices.parse_device(device)
    bf16 = info.bf16 or info.kind == "cpu"  # a CPU computes bfloat16 without native support too; a pre-Ampere GPU not
    dtypes = ["float32", "float16", "bfloat16"] if bf16 else ["float32", "float16"]
    rates = {dt: greedy(pool, device, dt, runs=2)[1] for dt in dtypes}  # the first run warms up
    figures.update({f"{dt}_tokens_per_second": r for dt, r in rates.items()},
                   bf16_native=info.bf16, fp16_native=info.fp16)
    assert all(rates.values()), f"a dtype produced no decode rate: {rates}"
    figures.update({f"{dt}_vs_float32": r / rates["float32"] for dt, r in rates.items() if dt != "float32"})


@pytest.mark.slow
@pytest.mark.device(kinds=("cuda", "mps"))
def test_greedy_tokens_on_a_gpu_equal_the_cpus(device, pool, figures):
    """Greedy tokens on the GPU equal the CPU's token by token (float32, TF32 off). How: the CPU's sequence is
    also run through both devices in one forward; their largest logit difference must be within the dtype's
    tolerance, and a differing token is accepted only where the CPU's choice led by less than twice that
    difference (a near-tie); after it the contexts differ, so later tokens are not compared."""
    def forward(model, device, seq: list[int]) -> torch.Tensor:
        with torch.inference_mode():  # thread-local: entered in the thread that runs the model
            return model(input_ids=torch.tensor([seq], device=device)).logits[0].float().cpu()

    def logits_of(seq: list[int]) -> torch.Tensor:
        with pool.held() as lm:
            return threads.run(forward, lm.model, lm.device, seq)

    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # TF32 would round float32 matmuls to 10-bit mantissas
    try:
        ref, _, n_prompt = greedy(pool, "cpu", "float32")
        with pool.held() as lm:
            seq = list(lm.tokenizer(engines.PROMPT)["input_ids"]) + ref
        ref_logits = logits_of(seq)
        ids, _, _ = greedy(pool, device, "float32")
        diff = float((ref_logits - logits_of(seq)).abs().max())
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    verdict = greedy_agreement(ref, ids, ref_logits[n_prompt - 1:n_prompt - 1 + len(ref)], diff)
    tol = dtype_tolerance(torch.float32)
    figures.update(max_logit_difference=diff, tolerance=tol, tokens=len(ids), **verdict)
    assert diff <= tol, f"float32 logits differ by {diff:.2e} between cpu and {device}"
    assert verdict["agree"], f"tokens differ at {verdict['first_difference']} by a margin of {verdict['margin']}"


@pytest.mark.slow
def test_speed_on_an_offloaded_model_says_so_and_puts_its_cost_on_the_hooks(pool, private_checkpoint, monkeypatch,
                                                                            one_thread):
    """The walk found Speed labelling a disk-offloaded model "cpu", blaming Python overhead and promising that a
    compiled static cache would remove most of it, while the profile's top operation was `aten::to` (the hooks
    bringing the weights in). Speed now reads the model's location: the bound's line names what `auto` became,
    a warning says the bound assumes every weight in RAM, and the limit is the hooks', measured per token."""
    from playground.core.inputs import check_limits
    from playground.web.views_speed import engines_markdown

    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(private_checkpoint.parent))
    pool.load(*loader.parse(str(private_checkpoint), "auto", "float32"), placement=check_limits("cpu=16MB,disk"))
    with pool.held() as lm:
        r = engines.run(lm.model, lm.tokenizer, lm.device, 8, False, "private", location=lm.report.location)
    assert r.limit.key == "eng.limit.offloaded" and r.location["offloaded_bytes"] == 9479168
    assert r.hooks["moved_bytes_per_token"] == 9479168 and r.hooks["hook_ms_per_token"] > 0
    text = engines_markdown(r.to_dict() | {"limit": r.limit}, "en")
    assert r.location["became"].startswith("cpu ") and "+ disk 9.0 MiB" in r.location["became"]
    assert f"on {r.location['became']} in float32" in text and "This model is offloaded: 4 of its 8 blocks" in text
    assert "compiled static-cache step removes" not in text and "bringing the offloaded weights in" in text
    assert "这个模型被卸载了" in engines_markdown(r.to_dict() | {"limit": r.limit}, "zh")
