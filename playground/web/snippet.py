"""The code to copy: the minimal Python that does what the playground just did, for the engine it used.

`snippet(src, device, dtype, prompt, params, ...)` writes the load, `.to(device)`, `eval()`,
tokenising, the engine the run used and decoding, with nothing that only measures; no server path
appears in it. The manual engines' loop is not written here: it is the source of
`playground.run.loop`, the functions the playground ran (`core_source`). tests/web/test_snippet.py
runs each variant as written and compares its tokens with the playground's. Why each step is there:
docs/serving.md.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from huggingface_hub import constants

from playground.core import settings
from playground.core.inputs import GenerationParams
from playground.core.paths import ASSETS, REPO
from playground.hw import devices
from playground.load import quantize, synthetic
from playground.load.catalog import ModelSource
from playground.run import loop

ENGINE_TITLES = {"generate": "generate()", "manual": "the manual loop with the KV cache",
                 "manual-nocache": "the manual loop without a cache"}


def model_lines(src: ModelSource) -> list[str]:
    """`model_id = ...`, written so that it works where the playground runs and names no server path."""
    if src.kind == "hub":
        return [f"model_id = {src.ref!r}  # on the Hugging Face Hub: downloaded into its cache on first use"]
    path = Path(src.ref)
    if src.kind == "bundled" or ASSETS in path.parents:
        rel = path.relative_to(REPO).as_posix()
        return [f"model_id = {rel!r}  # the bundled model, relative to the playground's repository: run this from its root"]
    if src.kind == "synthetic" or synthetic.root().resolve() in path.parents:
        name = src.name if src.kind == "synthetic" else f"synthetic/{path.name}"
        return ["from playground.load import synthetic  # the playground's package: run this from its repository",
                "",
                f"model_id = str(synthetic.ensure({name!r}))  # random weights: the text is noise; "
                "the timings and memory are real"]
    hub_id = _hub_id(path)
    if hub_id:
        return [f"model_id = {hub_id!r}  # from the Hugging Face cache (the Hub's id)"]
    for root in settings.read().model_dirs:
        root = root.expanduser().resolve()
        if root == path or root in path.parents:
            rel = path.relative_to(root).as_posix()
            return ["import os",
                    "",
                    "# a folder under one listed in PLAYGROUND_MODEL_DIRS, found the way the playground finds it",
                    "model_id = next(p for d in os.environ['PLAYGROUND_MODEL_DIRS'].split(os.pathsep)",
                    f"                if os.path.isdir(p := os.path.join(os.path.expanduser(d), {rel!r})))"]
    return [f"model_id = {path.name!r}  # a local folder: write its path here"]


def _hub_id(path: Path) -> str | None:
    """'org/name' for a snapshot folder of the Hugging Face cache (models--org--name/snapshots/<commit>)."""
    cache = Path(constants.HF_HUB_CACHE).expanduser().resolve()
    try:
        parts = path.relative_to(cache).parts
    except ValueError:
        return None
    m = re.fullmatch(r"models--(.+)", parts[0]) if parts else None
    return m.group(1).replace("--", "/") if m and len(parts) >= 3 and parts[1] == "snapshots" else None


def snippet(src: ModelSource, device: str, dtype: str, prompt: str, params: GenerationParams,
            engine: str = "generate", chat_template: bool = False) -> str:
    """Python source that reproduces one playground run: `device` and `dtype` as the load report names
    them ("cpu", "cuda:0", "auto"; "bfloat16", "auto"), the prompt and settings as checked, `engine` as
    run ("generate", "manual", "manual-nocache"), `chat_template`: whether the run applied the template."""
    n, t, p, s = params.max_new_tokens, params.temperature, params.top_p, params.seed
    greedy, auto = params.greedy, device == "auto"
    quantized = dtype in devices.QUANTIZED
    loaded = devices.dtype_name(devices.load_dtype(dtype))  # int8, int4: loaded in float32, quantized after
    dtype_arg = '"auto"' if dtype == "auto" else f"torch.{loaded}"
    mode = "greedy" if greedy else f"sampling, temperature {t:g}, top_p {p:g}, seed {s}"
    where = "model.device" if auto else "device"

    lines = [f"# {src.name} on {device} in {dtype}, {ENGINE_TITLES[engine]}, {mode}, {n} new tokens"
             + (", chat template" if chat_template else "") + ": what the device playground ran."]
    if not greedy:
        # Sampling draws from torch's generator: the same seed gives the same tokens only with the same
        # torch version and device.
        lines.append("# Sampled tokens repeat exactly only with the same seed, torch version and device.")
    lines += ["import torch", "from transformers import AutoModelForCausalLM, AutoTokenizer"]
    if quantized:
        lines.append(f"from torchao.quantization import quantize_, {', '.join(quantize.SPECS[dtype]['names'])}")
    if engine != "generate":
        lines += core_source(skip=set(lines))
    lines += ["", *model_lines(src)]
    if not auto:
        lines.append(f"device = {device!r}")
    lines += ["", "tokenizer = AutoTokenizer.from_pretrained(model_id)"]
    if auto:
        lines += [
            "# device_map='auto': Accelerate places each layer while loading (GPUs first, then the CPU);",
            "# a dispatched model is never moved with .to().",
            f'model = AutoModelForCausalLM.from_pretrained(model_id, dtype={dtype_arg}, use_safetensors=True, device_map="auto")',
        ]
    else:
        lines += [
            f"model = AutoModelForCausalLM.from_pretrained(model_id, dtype={dtype_arg}, use_safetensors=True)  # disk -> RAM",
            "model.to(device)  # RAM -> device",
        ]
    if quantized:
        lines += quantize_lines(dtype)
    lines += ["model.eval()  # dropout off (from_pretrained already did; explicit is safer)", ""]
    if chat_template:
        lines += ["# an instruct model: the prompt goes in as the user's message, and the template opens the reply",
                  f'messages = [{{"role": "user", "content": {prompt!r}}}]',
                  "inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, "
                  f'return_tensors="pt", return_dict=True).to({where})  # inputs go where the weights are']
    else:
        lines.append(f'inputs = tokenizer({prompt!r}, return_tensors="pt").to({where})  # inputs go where the weights are')
    lines.append(f"torch.manual_seed({s})")
    if engine == "generate":
        gen = (f"max_new_tokens={n}, do_sample=False" if greedy
               else f"max_new_tokens={n}, do_sample=True, temperature={t!r}, top_p={p!r}, top_k=0")
        lines += ["with torch.inference_mode():",
                  f"    out = model.generate(**inputs, {gen})",
                  'new_ids = out[0, inputs["input_ids"].shape[1]:].tolist()  # the output starts with the prompt']
    else:
        warpers = "None" if greedy else f"warpers_for({t!r}, {p!r})"
        lines += ["",
                  "# The loop above is the one generate() runs inside. generate() adds, from the model's",
                  "# generation_config: logits processors (repetition penalty, min length...), stopping criteria,",
                  "# streamers, batches with padding, and cache types (static, offloaded); for one greedy or",
                  "# top-p sequence the tokens are the same.",
                  f"tokens = generate_tokens(model, inputs[\"input_ids\"], inputs[\"attention_mask\"], {n}, eos_ids(model),",
                  f"                         warpers={warpers}, use_cache={engine == 'manual'})",
                  "new_ids = [token for token, _arrived in tokens]"]
    lines += ["print(tokenizer.decode(new_ids, skip_special_tokens=True))",
              "print(new_ids)  # the token ids, to compare with the playground exactly"]
    return "\n".join(lines) + "\n"


def quantize_lines(dtype: str) -> list[str]:
    """torchao's quantize_ with the playground's config text and its choice of layers (load/quantize.py's `layers`):
    exactly nn.Linear, not the head when it is the embedding's own tensor, and with groups, inputs that divide."""
    spec = quantize.SPECS[dtype]
    group = f" and m.in_features % {spec['group']} == 0" if spec["group"] else ""
    return ["# weight-only: each chosen nn.Linear's weight becomes small integers with float32 scales; the rest stays",
            "# float32. quantize_ swaps nn.Linear only (GPT-2's Conv1D layers stay); a head that is the embedding's own",
            "# tensor stays too: quantizing it would add a second, quantized copy beside the float embedding.",
            "embedding = model.get_input_embeddings().weight",
            f"quantize_(model, {spec['config']},",
            f"          filter_fn=lambda m, fqn: type(m) is torch.nn.Linear and m.weight is not embedding{group})"]


def core_source(skip: set[str] = frozenset()) -> list[str]:
    """The decode loop as the playground runs it: the source of `playground.run.loop` (its docstring
    aside), under a comment saying so; import lines already in `skip` are left out."""
    text = inspect.getsource(loop)
    first = ast.parse(text).body[1].lineno  # the statement after the module's docstring
    body = [ln for ln in text.splitlines()[first - 1:] if ln not in skip]
    return ["", "", "# The decode loop, as the device playground runs it (its playground/run/loop.py, verbatim).", *body, ""]
