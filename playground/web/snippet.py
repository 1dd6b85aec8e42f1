"""The code to copy: the minimal Python that does what the playground just did, for the engine it used.

The playground's own path (the timed loader, then generation.stream or the manual
loop) times every phase, streams tokens from a thread and counts them; none of
that changes which tokens come out. The snippet keeps only what does:

1. `from_pretrained(..., dtype=..., use_safetensors=True)`: disk -> RAM, cast
   to the dtype while loading.
2. `model.to(device)`: RAM -> device. With device "auto" there is no `.to()`:
   `device_map="auto"` places each layer while loading, and Accelerate refuses
   to move a dispatched model afterwards.
3. `model.eval()`: dropout off. `from_pretrained` already returns the model in
   eval mode, so here it changes nothing; it is written out because a model that
   was trained, or built another way, in the same program is in training mode,
   and then dropout (0.1 in the bundled model's config) makes every output random.
4. tokenise on the CPU (through the chat template when the run applied it: the
   prompt as the user's message, `add_generation_prompt=True`), then move the
   inputs to the model's device: a CPU `input_ids` against CUDA embedding weights
   is the classic device error.
5. `torch.manual_seed(seed)`, then the engine the run used: `generate()` with the
   same settings (greedy, or sampling with the same temperature and top_p and
   `top_k=0`, because `generate()` otherwise applies its default top-50 filter,
   which the playground does not), or the tutorials' loop by hand: one prefill
   forward over the prompt, then one forward per token, with the KV cache or,
   for "no cache", the whole sequence again every step.
6. decode only the new tokens.

No server path appears in it: the bundled model is named relative to the
repository (run the code from its root), a synthetic model by the playground's
own lookup, a folder under PLAYGROUND_MODEL_DIRS by that variable, a Hub model by
its id. tests/web/test_snippet.py runs each variant as written and compares its
tokens with the playground's.
"""

from __future__ import annotations

import re
from pathlib import Path

from huggingface_hub import constants

from playground.core import settings
from playground.core.inputs import GenerationParams
from playground.core.paths import ASSETS, REPO
from playground.load import synthetic
from playground.load.catalog import ModelSource

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
    dtype_arg = '"auto"' if dtype == "auto" else f"torch.{dtype}"
    mode = "greedy" if greedy else f"sampling, temperature {t:g}, top_p {p:g}, seed {s}"
    where = "model.device" if auto else "device"

    lines = [f"# {src.name} on {device} in {dtype}, {ENGINE_TITLES[engine]}, {mode}, {n} new tokens"
             + (", chat template" if chat_template else "") + ": what the device playground ran."]
    if not greedy:
        # Sampling draws from torch's generator: the same seed gives the same tokens only with the same
        # torch version and device.
        lines.append("# Sampled tokens repeat exactly only with the same seed, torch version and device.")
    lines += ["import torch", "from transformers import AutoModelForCausalLM, AutoTokenizer"]
    if engine != "generate" and not greedy:
        lines.append("from transformers.generation.logits_process import TemperatureLogitsWarper, TopPLogitsWarper")
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
        lines += _loop(n, t, p, greedy, cache=engine == "manual")
    lines += ["print(tokenizer.decode(new_ids, skip_special_tokens=True))",
              "print(new_ids)  # the token ids, to compare with the playground exactly"]
    return "\n".join(lines) + "\n"


def _loop(n: int, t: float, p: float, greedy: bool, cache: bool) -> list[str]:
    """The tutorials' prefill/decode loop, as the playground's manual engine runs it (run/decode.py)."""
    out = ["",
           "# The loop generate() runs inside, by hand. generate() adds, from the model's generation_config:",
           "# logits processors (repetition penalty, min length...), stopping criteria, streamers, batches with",
           "# padding, and cache types (static, offloaded); for one greedy or top-p sequence the tokens are the same.",
           'ids, mask = inputs["input_ids"], inputs["attention_mask"]',
           "eos = model.generation_config.eos_token_id",
           "eos = set(eos) if isinstance(eos, list) else {eos}"]
    if not greedy:
        warpers = ([f"TemperatureLogitsWarper({t!r})"] if t != 1.0 else []) + ([f"TopPLogitsWarper({p!r})"] if p < 1.0 else [])
        out.append(f"warpers = [{', '.join(warpers)}]  # the same temperature and top_p as generate()")
    out += ["new_ids = []",
            "with torch.inference_mode():"]
    if cache:
        out += ["    # prefill: the whole prompt in one forward pass; use_cache=True returns every layer's keys and",
                "    # values (past_key_values). logits_to_keep=1: the logits of the last position only, as generate()",
                "    out = model(input_ids=ids, attention_mask=mask, use_cache=True, logits_to_keep=1)"]
    else:
        out += ["    # no cache: every step runs the whole sequence again, prompt included, so step n costs more",
                "    # than step n-1; the KV cache is what saves that",
                "    out = model(input_ids=ids, attention_mask=mask, use_cache=False, logits_to_keep=1)"]
    out += ["    while True:",
            "        scores = out.logits[:, -1, :].float()  # generate() chooses in float32"]
    if greedy:
        out.append("        next_id = scores.argmax(dim=-1, keepdim=True)  # greedy")
    else:
        out += ["        for w in warpers:",
                "            scores = w(ids, scores)",
                "        next_id = torch.multinomial(torch.softmax(scores, dim=-1), num_samples=1)  # sampling"]
    out += ["        new_ids.append(next_id.item())  # .item() copies to the CPU: it waits for the device",
            f"        if new_ids[-1] in eos or len(new_ids) == {n}:",
            "            break",
            "        ids = torch.cat([ids, next_id], dim=-1)",
            "        mask = torch.cat([mask, mask.new_ones((1, 1))], dim=-1)"]
    if cache:
        out += ["        # decode: only the new token goes in; the cache holds the keys and values of all the others",
                "        out = model(input_ids=next_id, attention_mask=mask, past_key_values=out.past_key_values,",
                "                    use_cache=True, logits_to_keep=1)"]
    else:
        out.append("        out = model(input_ids=ids, attention_mask=mask, use_cache=False, logits_to_keep=1)")
    return out
