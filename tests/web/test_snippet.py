"""The code to copy: it runs as written and produces the playground's tokens."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from playground.core.inputs import GenerationParams
from playground.core.paths import BUNDLED_DIR, BUNDLED_NAME
from playground.load import catalog, loader
from playground.run.slot import ModelSlot
from playground.web import snippet as code


def snippet(model: str, device: str, dtype: str, prompt: str, n: int, t: float, p: float, s: int) -> str:
    """The code to copy for a run the page checked (the snippet itself takes checked, typed values)."""
    return code.snippet(catalog.resolve(model), device, dtype, prompt, GenerationParams(n, t, p, s))

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


def _run(src: str, tmp: Path, name: str) -> subprocess.Popen:
    path = tmp / f"{name}.py"
    path.write_text(src, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    # cwd is a temporary folder, not the repo: the bundled path must work from anywhere.
    return subprocess.Popen([sys.executable, str(path)], cwd=tmp, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _printed(proc: subprocess.Popen) -> tuple[str, list[int]]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert out.endswith("\n"), out
    text, ids_line = out[:-1].rsplit("\n", 1)  # the text may itself contain newlines
    return text, ast.literal_eval(ids_line)


@pytest.mark.slow
def test_snippet_runs_as_written_and_matches_the_playground(tmp_path):
    cases = {"greedy": (0.0, 1.0, 0), "sampling": (0.8, 0.9, 3)}
    procs = {name: _run(snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, TOKENS, t, p, s), tmp_path, name)
             for name, (t, p, s) in cases.items()}

    # The playground's own path, in this process, while the snippets run.
    slot = ModelSlot()
    slot.load(*loader.parse(BUNDLED_NAME, "cpu", "float32"))
    with slot.held() as lm:
        model, tokenizer = lm.model, lm.tokenizer
    outputs = []
    real_generate = model.generate

    def spy(*args, **kwargs):  # records what the playground's generate() returned; changes nothing
        out = real_generate(*args, **kwargs)
        outputs.append(out)
        return out

    model.generate = spy
    for name, (t, p, s) in cases.items():
        *_, (text, stats) = slot.generate(PROMPT, GenerationParams(TOKENS, t, p, s), session=name)
        prompt_len = tokenizer(PROMPT, return_tensors="pt")["input_ids"].shape[1]
        ids = outputs[-1][0, prompt_len:].tolist()
        assert stats.new_tokens == len(ids) > 0

        snippet_text, snippet_ids = _printed(procs[name])
        assert snippet_ids == ids, f"{name}: snippet {snippet_ids} != playground {ids}"
        assert snippet_text == text, name
    # The two cases really differ: sampling is not greedy in disguise.
    assert outputs[0][0].tolist() != outputs[1][0].tolist()


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


def test_bundled_path_is_absolute_and_hub_ids_are_kept():
    tree = ast.parse(snippet(BUNDLED_NAME, "cpu", "float32", PROMPT, 8, 0, 1, 0))
    model_id = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                    if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "model_id")
    assert Path(model_id).is_absolute() and Path(model_id) == BUNDLED_DIR
    assert "model_id = 'Qwen/Qwen2.5-0.5B-Instruct'" in snippet("Qwen/Qwen2.5-0.5B-Instruct", "cpu", "float32",
                                                                PROMPT, 8, 0, 1, 0)


@pytest.mark.parametrize("prompt", ['He said """no"""\n', "back\\slash 'quote'", "你好，世界\t\x7f"])
def test_any_prompt_is_written_as_a_literal(prompt):
    tree = ast.parse(snippet(BUNDLED_NAME, "cpu", "float32", prompt, 8, 0, 1, 0))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "tokenizer")
    assert ast.literal_eval(call.args[0]) == prompt
