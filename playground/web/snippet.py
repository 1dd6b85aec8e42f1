"""The code to copy: the minimal Python that does what the playground just did.

The playground's own path (the timed loader, then generation.stream) times every
phase, streams tokens from a thread and counts them; none of that changes which
tokens come out. The snippet keeps only what does:

1. `from_pretrained(..., dtype=..., use_safetensors=True)`: disk -> RAM, cast
   to the dtype while loading.
2. `model.to(device)`: RAM -> device. With device "auto" there is no `.to()`:
   `device_map="auto"` places each layer while loading, and Accelerate refuses
   to move a dispatched model afterwards.
3. `model.eval()`: dropout off. `from_pretrained` already returns the model in
   eval mode, so here it changes nothing; it is written out because a model that
   was trained, or built another way, in the same program is in training mode,
   and then dropout (0.1 in the bundled model's config) makes every output random.
4. tokenise on the CPU, then move the inputs to the model's device: a CPU
   `input_ids` against CUDA embedding weights is the classic device error.
5. `torch.manual_seed(seed)`, then `generate()` with the same settings: greedy
   (`do_sample=False`) when temperature is 0; otherwise sampling with the same
   temperature and top_p, and `top_k=0`, because `generate()` otherwise applies
   its default top-50 filter, which the playground does not.
6. decode only the new tokens (the output repeats the prompt first).

The test in tests/web/test_snippet.py runs the snippet as written and compares its
tokens with the playground's.
"""

from __future__ import annotations

from playground.core.inputs import GenerationParams
from playground.load.catalog import ModelSource


def snippet(src: ModelSource, device: str, dtype: str, prompt: str, params: GenerationParams) -> str:
    """Python source that reproduces one playground run: `device` and `dtype` as the load report
    names them ("cpu", "cuda:0", "auto"; "bfloat16", "auto"), the prompt and settings as checked."""
    n, t, p, s = params.max_new_tokens, params.temperature, params.top_p, params.seed
    greedy = params.greedy
    auto = device == "auto"

    # A bundled, synthetic or local model is a folder: its absolute path works
    # from any working directory on the machine that ran the playground (on a
    # Space, that is the Space: the comment says where the folder comes from).
    # A Hub id is written as it is.
    where = {
        "bundled": "bundled: playground/assets/shakespeare-gpt2 in the playground's repository",
        "synthetic": "random weights: the text is noise; the timings and memory are real",
        "local": "a local folder",
        "hub": "downloaded from the Hugging Face Hub on first use",
    }[src.kind]
    dtype_arg = '"auto"' if dtype == "auto" else f"torch.{dtype}"
    mode = "greedy" if greedy else f"sampling, temperature {t:g}, top_p {p:g}, seed {s}"

    lines = [
        f"# {src.name} on {device} in {dtype}, {mode}, {n} new tokens: what the device playground ran.",
        "import torch",
        "from transformers import AutoModelForCausalLM, AutoTokenizer",
        "",
        f"model_id = {src.ref!r}  # {where}",
    ]
    if not auto:
        lines.append(f"device = {device!r}")
    lines += [
        "",
        "tokenizer = AutoTokenizer.from_pretrained(model_id)",
    ]
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
    lines += [
        "model.eval()  # dropout off (from_pretrained already did; explicit is safer)",
        "",
        f"inputs = tokenizer({prompt!r}, return_tensors=\"pt\").to({'model.device' if auto else 'device'})"
        "  # inputs go where the weights are",
        f"torch.manual_seed({s})",
        "with torch.inference_mode():",
    ]
    if greedy:
        gen = f"max_new_tokens={n}, do_sample=False"
    else:
        gen = f"max_new_tokens={n}, do_sample=True, temperature={t!r}, top_p={p!r}, top_k=0"
    lines += [
        f"    out = model.generate(**inputs, {gen})",
        'new_ids = out[0, inputs["input_ids"].shape[1]:]  # the output starts with the prompt',
        "print(tokenizer.decode(new_ids, skip_special_tokens=True))",
        "print(new_ids.tolist())  # the token ids, to compare with the playground exactly",
    ]
    if not greedy:
        # Sampling draws from torch's generator; the same seed gives the same tokens
        # only with the same torch version and device.
        lines.insert(1, "# Sampled tokens repeat exactly only with the same seed, torch version and device.")
    return "\n".join(lines) + "\n"
