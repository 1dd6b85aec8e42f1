"""The code to copy: it runs as written and produces the playground's tokens."""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME, REPO
from playground.load import catalog, loader
from playground.run.pool import ModelPool
from playground.web import snippet as code
from tests.conftest import ROOT


def snippet(model: str, device: str, dtype: str, prompt: str, n: int, t: float, p: float, s: int,
            engine: str = "generate", chat: bool = False) -> str:
    """The code to copy for a run the page checked (the snippet itself takes checked, typed values)."""
    return code.snippet(catalog.resolve(model), device, dtype, prompt, GenerationParams(n, t, p, s), engine, chat)

PROMPT = "ROMEO:"
TOKENS = 24


def _generate_call(src: str) -> ast.Call:
    calls = [n for n in ast.walk(ast.parse(src))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "generate"]
    assert len(calls) == 1, src
    return calls[0]


def _kwargs(call: ast.Call) -> dict:
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg is not None}


def _from_pretrained_kwargs(src: str) -> dict:
    calls = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "from_pretrained" and ast.unparse(n.func.value) == "AutoModelForCausalLM"]
    assert len(calls) == 1, src
    return {k.arg: ast.unparse(k.value) for k in calls[0].keywords}


# One interpreter runs every snippet, each exactly as written, in a namespace of its own (importing torch
# and Transformers once instead of once per snippet): its printed text and token ids are kept.
RUNNER = r"""
import contextlib, io, json, sys
out = []
for src in json.load(sys.stdin):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "snippet", "exec"), {"__name__": "__main__"})
    out.append(buf.getvalue())
sys.stdout.write(json.dumps(out))
"""


def _run(sources: list[str], env_extra: dict | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", **(env_extra or {}))
    # cwd is the repository's root: the code names the bundled model relative to it, as its comment says
    proc = subprocess.Popen([sys.executable, "-c", RUNNER], cwd=ROOT, env=env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(json.dumps(sources))
    proc.stdin.close()
    return proc


def _printed(proc: subprocess.Popen) -> list[tuple[str, list[int]]]:
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.wait(timeout=180) == 0, err[-2000:]
    got = []
    for printed in json.loads(out):
        assert printed.endswith("\n"), printed
        text, ids_line = printed[:-1].rsplit("\n", 1)  # the text may itself contain newlines
        got.append((text, ast.literal_eval(ids_line)))
    return got


# (engine, temperature, top_p, seed, chat template): every engine, greedy and sampled, and a chat model
CASES = [("generate", 0.0, 1.0, 0, False), ("generate", 0.8, 0.9, 3, False), ("manual", 0.0, 1.0, 0, False),
         ("manual", 0.8, 0.95, 5, False), ("manual-nocache", 0.0, 1.0, 0, False), ("generate", 0.8, 0.95, 0, True),
         ("manual", 0.0, 1.0, 0, True)]


@pytest.mark.slow
def test_snippet_runs_as_written_and_matches_the_playground(chat_model, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(chat_model.parent))
    models = {False: BUNDLED_NAME, True: str(chat_model)}
    sources = [snippet(models[chat], "cpu", "float32", PROMPT, TOKENS, t, p, s, engine, chat)
               for engine, t, p, s, chat in CASES]
    assert all(str(chat_model.parent) not in src for src in sources)
    proc = _run(sources, {"PLAYGROUND_MODEL_DIRS": str(chat_model.parent)})

    # The playground's own path, in this process, while the snippets run.
    played = []
    for chat in (False, True):
        pool = ModelPool()
        pool.load(*loader.parse(models[chat], "cpu", "float32"), session="x")
        with pool.held("x") as lm:
            model = lm.model
        outputs = []
        real_generate = model.generate

        def spy(*args, real=real_generate, outputs=outputs, **kwargs):  # records what generate() returned
            out = real(*args, **kwargs)
            outputs.append(out)
            return out

        model.generate = spy
        for engine, t, p, s, c in CASES:
            if c != chat:
                continue
            *_, (text, stats) = pool.generate(PROMPT, GenerationParams(TOKENS, t, p, s), session="x", engine=engine)
            assert stats.chat_template_applied is chat
            if engine == "generate":
                ids = outputs[-1][0, stats.prompt_tokens:].tolist()
            else:
                ids = stats.token_ids
            assert stats.new_tokens == len(ids) > 0
            played.append((text, ids))
    by_case = _in_case_order(played, CASES)
    for case, (text, ids), (snippet_text, snippet_ids) in zip(CASES, by_case, _printed(proc)):
        assert snippet_ids == ids, f"{case}: snippet {snippet_ids} != playground {ids}"
        assert snippet_text == text, case
    # the cases really differ: sampling is not greedy in disguise, and the template changes the prompt
    assert by_case[0][1] != by_case[1][1] and by_case[0][1] != by_case[6][1]


def _in_case_order(played: list, cases: list) -> list:
    """`played` ran the plain cases first, then the chat ones: back into the order of `cases`."""
    plain = iter(played[: sum(1 for *_, c in cases if not c)])
    chat = iter(played[sum(1 for *_, c in cases if not c):])
    return [next(chat) if c else next(plain) for *_, c in cases]


def test_greedy_and_sampling_parameters():
    greedy = _kwargs(_generate_call(snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, 24, 0, 0.5, 7)))
    assert greedy == {"max_new_tokens": 24, "do_sample": False}

    sampled = _kwargs(_generate_call(snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, 10, 0.7, 0.95, 7)))
    assert sampled == {"max_new_tokens": 10, "do_sample": True, "temperature": 0.7, "top_p": 0.95, "top_k": 0}


@pytest.mark.parametrize("device", ["cpu", "cuda:0", "cuda:1", "mps"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "auto"])
def test_every_device_and_dtype(device, dtype):
    src = snippet(BUNDLED_NAME, device, dtype, PROMPT, 8, 0, 1, 0)
    kw = _from_pretrained_kwargs(src)
    assert kw["dtype"] == ("'auto'" if dtype == "auto" else f"torch.{dtype}")
    assert kw["use_safetensors"] == "True"
    assert "device_map" not in kw
    assert f"device = {device!r}" in src
    assert "model.to(device)" in src and ".to(device)" in src.split("tokenizer(", 1)[1]
    assert src.index("model.to(device)") < src.index("model.eval()") < src.index("torch.manual_seed(0)")


def test_auto_uses_device_map_and_no_to():
    src = snippet(BUNDLED_NAME, "auto", "bfloat16", PROMPT, 8, 0, 1, 0)
    kw = _from_pretrained_kwargs(src)
    assert kw["device_map"] == "'auto'"
    assert "model.to(" not in src
    assert ".to(model.device)" in src


def _model_id_line(src: str) -> str:
    return next(ln for ln in src.splitlines() if ln.startswith("model_id = "))


def test_no_server_path_in_the_code_bundled_relative_hub_by_id():
    src = snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, 8, 0, 1, 0)
    tree = ast.parse(src)
    model_id = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                    if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "model_id")
    assert model_id == "playground/assets/shakespeare-gpt2" and (REPO / model_id) == BUNDLED_DIR
    assert str(REPO) not in src and str(Path.home()) not in src
    assert "model_id = 'Qwen/Qwen2.5-0.5B-Instruct'" in snippet("Qwen/Qwen2.5-0.5B-Instruct", "cpu", "float32",
                                                                PROMPT, 8, 0, 1, 0)


def test_synthetic_and_model_dirs_folders_are_found_not_quoted(tmp_path, monkeypatch):
    from playground.load import synthetic

    src = snippet("synthetic/gpt2-small", "cpu", "float32", PROMPT, 8, 0, 1, 0)
    assert "synthetic.ensure('synthetic/gpt2-small')" in src and str(synthetic.root()) not in src
    folder = tmp_path / "models" / "mine"
    shutil.copytree(BUNDLED_DIR, folder)
    monkeypatch.setenv("PLAYGROUND_MODEL_DIRS", str(tmp_path / "models"))
    src = snippet(str(folder), "cpu", "float32", PROMPT, 8, 0, 1, 0)
    assert str(tmp_path) not in src and "PLAYGROUND_MODEL_DIRS" in src and "'mine'" in src
    compile(src, "snippet", "exec")


def _generate_tokens_call(src: str) -> ast.Call:
    calls = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call) and ast.unparse(n.func) == "generate_tokens"
             and isinstance(n.args[0], ast.Name) and n.args[0].id == "model"]
    assert len(calls) == 1, src
    return calls[0]


@pytest.mark.parametrize("engine", ["generate", "manual", "manual-nocache"])
def test_each_engine_writes_its_own_code(engine):
    src = snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, 8, 0, 1, 0, engine=engine)
    assert ("model.generate(" in src) == (engine == "generate")
    assert ("def decode_one_token(" in src) == (engine != "generate")
    if engine != "generate":
        kw = {k.arg: ast.unparse(k.value) for k in _generate_tokens_call(src).keywords}
        assert kw == {"warpers": "None", "use_cache": str(engine == "manual")}
    compile(src, "snippet", "exec")


@pytest.mark.parametrize("engine, t, p", [("manual", 0, 1), ("manual-nocache", 0, 1), ("manual", 0.7, 0.9)])
def test_the_loop_to_copy_is_the_source_the_playground_runs(engine, t, p):
    """The manual engines' code to copy defines the decode core's functions with their source, verbatim,
    once each, and calls its whole loop with the run's budget and sampling (the page's tokens: the slow test)."""
    from playground.run import loop

    src = snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, 8, t, p, 0, engine=engine)
    for fn in (loop.eos_ids, loop.warpers_for, loop.last_logits_only, loop.prefill, loop.choose,
               loop.decode_one_token, loop.decode_n_tokens, loop.generate_tokens):
        assert src.count(inspect.getsource(fn)) == 1, fn.__name__
    defined = [n.name for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)]
    assert defined == [n.name for n in ast.parse(inspect.getsource(loop)).body if isinstance(n, ast.FunctionDef)]
    call = _generate_tokens_call(src)
    assert ast.literal_eval(call.args[3]) == 8 and ast.unparse(call.args[4]) == "eos_ids(model)"
    warpers = {k.arg: ast.unparse(k.value) for k in call.keywords}["warpers"]
    assert warpers == ("None" if t == 0 else f"warpers_for({t!r}, {p!r})")


def test_no_decode_step_is_written_in_the_web_layer():
    """The loop the page shows is the loop it runs: no forward pass with a cache is spelled out under
    playground/web (the code to copy takes it from playground/run/loop.py)."""
    web = Path(code.__file__).parent
    for path in web.rglob("*.py"):
        text = path.read_text()
        for spelled in ("past_key_values", "use_cache=True", "logits_to_keep", "model(input_ids"):
            assert spelled not in text, (path.name, spelled)


@pytest.mark.parametrize("prompt", ['He said """no"""\n', "back\\slash 'quote'", "你好，世界\t\x7f"])
def test_any_prompt_is_written_as_a_literal(prompt):
    tree = ast.parse(snippet(BUNDLED_NAME, "cpu", "float32", prompt, 8, 0, 1, 0))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tokenizer")
    assert ast.literal_eval(call.args[0]) == prompt


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["int8", "int4"])
def test_a_quantized_run_is_copied_as_float32_then_quantize_and_gives_the_playgrounds_tokens(dtype):
    """The code to copy loads in float32 and quantizes with the playground's config text and layer choice: run as
    written, it chooses the playground's greedy tokens, for generate() and for the manual loop."""
    from playground.load import quantize

    model = "synthetic/llama-42m"
    cases = [("generate", 0.0, 1.0, 0, False), ("manual", 0.0, 1.0, 0, False)]
    sources = [snippet(model, "cpu", dtype, PROMPT, 12, t, p, s, engine) for engine, t, p, s, _ in cases]
    assert all(quantize.SPECS[dtype]["config"] in src and "dtype=torch.float32" in src for src in sources)
    proc = _run(sources)
    pool = ModelPool()
    pool.load(*loader.parse(model, "cpu", dtype), session="q")
    played = []
    for engine, t, p, s, _ in cases:
        *_, (text, stats) = pool.generate(PROMPT, GenerationParams(12, t, p, s), session="q", engine=engine)
        played.append(stats.token_ids)
    with pool.held("q") as lm:
        assert lm.report.quantized.quantized == 56
    pool.clear()
    for (engine, *_), ids, (_text, snippet_ids) in zip(cases, played, _printed(proc)):
        assert snippet_ids == ids, (dtype, engine)
