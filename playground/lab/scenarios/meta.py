"""Meta and offload mistakes: a model with no data run or moved, an offloaded model moved with `.to()`."""

from __future__ import annotations

import tempfile

import torch
from accelerate import dispatch_model, init_empty_weights

from playground.core.i18n import W
from playground.lab.capture import attempt, capture_logs
from playground.lab.harness import Lab, blocks, greedy, move, name_of, row, run_fix, scenario
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script

GREEDY = """
with torch.inference_mode():
    for _ in range(8):                                       # greedy decoding, one forward pass per token
        logits = {m}(input_ids).logits
        next_id = logits[:, -1:].argmax(-1)
        input_ids = torch.cat([input_ids, next_id], dim=-1)
print(repr(tokenizer.decode(input_ids[0])))
"""
SAME = """
model = model.to(device)
with torch.inference_mode():
    same = torch.equal(empty(input_ids).logits, model(input_ids).logits)
print("the same logits as the model from_pretrained built:", same)
assert same
"""
DEVICE_MAP = """
n = model.config.n_layer                    # GPT-2's blocks: transformer.h.0 ... h.{n-1}
device_map = {"transformer.wte": device, "transformer.wpe": device, "transformer.drop": device,
              "transformer.ln_f": device, "lm_head": device,
              **{f"transformer.h.{i}": device if i < n // 2 else "disk" for i in range(n)}}
"""
DISPATCH = DEVICE_MAP + """model = dispatch_model(model, device_map=device_map, main_device=device, offload_dir=tempfile.mkdtemp())
"""


def _empty_model(src):
    """The same architecture built on the meta device: shapes and dtypes, no data, no memory."""
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    with init_empty_weights():
        return AutoModelForCausalLM.from_config(src.config).eval()


def _offload_map(model, blocks_name: str, n_blocks: int) -> dict[str, str]:
    """A device map: everything on the CPU except the second half of the blocks, offloaded to disk."""
    dm: dict[str, str] = {}

    def walk(prefix: str, mod) -> None:
        for name, child in mod.named_children():
            full = prefix + name
            if full == blocks_name:
                for i in range(n_blocks):
                    dm[f"{full}.{i}"] = "cpu" if i < n_blocks // 2 else "disk"
            elif blocks_name.startswith(full + "."):
                walk(full + ".", child)
            else:
                dm[full] = "cpu"

    walk("", model)
    return dm


@scenario(
    "meta-weights-run", 5,
    title=W("Meta weights used: a model built on the meta device, then run",
            "使用了 meta 权重：在 meta 设备上构建模型后直接运行"),
    explain=W(
        "`init_empty_weights()` (or `torch.device('meta')`) builds the model with meta tensors: shapes "
        "and dtypes, no data. The forward pass does not fail, because meta operators only compute output "
        "shapes, so the logits come out on the meta device. The error appears where a meta result meets "
        "a real tensor: appending the next token to the CPU input_ids. Load real weights "
        "(from_pretrained, or `load_state_dict(..., assign=True)`) before running. GPT-2's output layer is tied "
        "to its embedding and not stored in the file, so `load_state_dict` needs `strict=False` for that one "
        "key (the fix checks that it is the only one missing) and `tie_weights()` after.",
        "`init_empty_weights()`（或 `torch.device('meta')`）"
        "用 meta 张量构建模型：只有形状和数据类型，没有数据。前向传播并不报错，"
        "因为 meta 算子只计算输出形状，所以 logits 也在 meta 设备上。"
        "错误出现在 meta 结果遇到真实张量的地方："
        "把下一个 token 拼接到 CPU 上的 input_ids 时。"
        "运行之前先加载真实权重（from_pretrained，"
        "或 `load_state_dict(..., assign=True)`）。GPT-2 的输出层与词嵌入绑定，文件里不保存它，"
        "所以 `load_state_dict` 对这一个键需要 `strict=False`（修复会检查缺少的只有它），之后再调用 `tie_weights()`。",
    ),
    before="""
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config)
output = generate(model, input_ids)
""",
    after="""
with init_empty_weights():
    model = AutoModelForCausalLM.from_config(config)
# strict=False: the tied lm_head.weight is not in the file (strict=True refuses: "Missing key(s)")
model.load_state_dict(load_file("model.safetensors"), assign=True, strict=False)
model.tie_weights()           # so tie it to the embedding again
output = generate(model, input_ids)
""",
    # meta logits meet the CPU input_ids in torch.cat (the lab runs this on the CPU on every host)
    expect=Outcome(RuntimeError, r"Tensor on device meta is not on the expected device cpu"),
    group="meta",
    bundled_only=True,
    script=Script("lm", imports="from accelerate import init_empty_weights\nfrom safetensors.torch import load_file",
                  broken="""
with init_empty_weights():
    empty = AutoModelForCausalLM.from_config(model.config).eval()   # shapes and dtypes, no data
input_ids = tokenizer(prompt, return_tensors="pt").input_ids
# meta in, meta out: the forward pass does not fail; then cat() meets the real (CPU) input_ids
""" + GREEDY.format(m="empty"), fix="""
with init_empty_weights():
    empty = AutoModelForCausalLM.from_config(model.config).eval()   # from_config builds it in train mode
state = load_file(f"{path}/model.safetensors")                # the real weights
missing, unexpected = empty.load_state_dict(state, assign=True, strict=False)
print("in the model, not in the file:", missing, "| in the file, not in the model:", unexpected)
assert set(missing) <= {"lm_head.weight"} and not unexpected  # GPT-2's head is the embedding, tied: not stored
empty.tie_weights()                                           # so tie it again (strict=True would refuse)
empty = empty.to(device)
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
""" + SAME + GREEDY.format(m="empty")),
)
def meta_weights_run(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    empty = _empty_model(src)
    emb = name_of(empty, empty.get_input_embeddings().weight)
    r.device = "meta"
    r.tensors = [row("input_ids", lab.ids), row(emb, empty.get_input_embeddings().weight)]
    with torch.inference_mode():
        logits = empty(lab.ids).logits
        r.tensors.append(row("logits", logits))
        attempt(r, lambda: greedy(empty, lab.ids))
    run_fix(lab, meta_weights_run, r)


@scenario(
    "meta-weights-moved", 6,
    title=W("Meta weights moved: .to(device) on a meta model",
            "移动 meta 权重：对 meta 模型调用 .to(device)"),
    explain=W(
        "`.to()` copies each tensor's data to the target device, and a meta tensor has no data to copy, "
        "so PyTorch refuses and points to `to_empty()`. `to_empty(device=...)` allocates uninitialised "
        "memory for every tensor on the target; the weights must then be loaded into it, and tied "
        "weights re-tied.",
        "`.to()` 会把每个张量的数据复制到目标设备，而 meta 张量没有数据可复制，"
        "所以 PyTorch 拒绝，并建议使用 `to_empty()`。"
        "`to_empty(device=...)` 在目标设备上为每个张量分配未初始化的内存；"
        "之后必须把权重加载进去，并重新绑定 tied 权重。",
    ),
    before="""
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config)
model = model.to("cpu")
""",
    after="""
with torch.device("meta"):
    model = AutoModelForCausalLM.from_config(config)
model = model.to_empty(device="cpu")   # allocate, uninitialised
model.load_state_dict(load_file("model.safetensors"), strict=False)
model.tie_weights()                     # to_empty untied lm_head and wte
# buffers missing from the file (non-persistent, e.g. rotary inv_freq)
# hold garbage now: recompute them, or load with from_pretrained instead
""",
    # Module.to on meta tensors; newer PyTorch adds the to_empty() advice (NOTES.md)
    expect=Outcome(NotImplementedError, r"Cannot copy out of meta tensor.*to_empty"),
    group="meta",
    bundled_only=True,
    script=Script("lm", imports="from safetensors.torch import load_file", broken="""
with torch.device("meta"):
    empty = AutoModelForCausalLM.from_config(model.config)   # every tensor on meta: no data
empty = empty.to(device)                                      # .to() copies data, and there is none
""", fix="""
with torch.device("meta"):
    empty = AutoModelForCausalLM.from_config(model.config)
empty = empty.to_empty(device=device).eval()                  # allocate on the device, uninitialised
missing, unexpected = empty.load_state_dict(load_file(f"{path}/model.safetensors"), strict=False)
assert set(missing) <= {"lm_head.weight"} and not unexpected  # the tied head is not stored
empty.tie_weights()                                           # to_empty untied the head and the embedding
# (a non-persistent buffer, e.g. Llama's rotary inv_freq, is in no file: it would hold garbage now;
# GPT-2 has none. Recompute such buffers, or load with from_pretrained.)
print("buffers:", [name for name, _ in empty.named_buffers()])
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
""" + SAME),
)
def meta_weights_moved(lab: Lab, r: BreakResult) -> None:
    src = lab.cpu_model()
    empty = _empty_model(src)
    emb = name_of(empty, empty.get_input_embeddings().weight)
    r.device = "meta"
    r.tensors = [row(emb, empty.get_input_embeddings().weight)]
    attempt(r, lambda: move(empty, "cpu"))
    run_fix(lab, meta_weights_moved, r)


@scenario(
    "offloaded-moved", 7,
    title=W("An Accelerate-dispatched model with offloaded modules moved with .to()",
            "用 .to() 移动一个由 Accelerate 分派、且有模块被卸载的模型"),
    explain=W(
        "`dispatch_model` with a device map that sends blocks to the disk replaces those weights with "
        "meta tensors and attaches hooks that load the real ones for each forward pass. A later `.to()` "
        "would move the empty meta tensors and break that arrangement, so Accelerate wraps `.to()` and "
        "refuses. Leave the placement to the device map (see hf_device_map below) and call the model as "
        "it is.",
        "用 `dispatch_model` 和把某些块放到磁盘（disk）"
        "的 device map 分派模型后，这些权重被换成 meta 张量，并挂上钩子（hook），"
        "在每次前向传播时加载真实权重。之后再调用 `.to()` 会移动空的 meta 张量、破坏这种安排，"
        "所以 Accelerate 包装了 `.to()` 并拒绝执行。"
        "把放置交给 device map（见下面的 hf_device_map），直接调用模型。",
    ),
    before="""
model = dispatch_model(model, device_map=device_map,   # some blocks -> "disk"
                       main_device="cpu", offload_dir=folder)
model = model.to("cpu")
""",
    after="""
model = AutoModelForCausalLM.from_pretrained(path, device_map=device_map,
                                             offload_folder=folder)   # the same map
print(model.hf_device_map)   # leave placement to the hooks
output = generate(model, input_ids)
""",
    # Accelerate's wrapper of .to() on a dispatched model (accelerate/big_modeling.py)
    expect=Outcome(RuntimeError, r"move a model that has some modules offloaded to cpu or disk"),
    group="meta",
    bundled_only=True,
    script=Script("lm", imports="import tempfile\nfrom accelerate import dispatch_model", broken=DISPATCH + """
model = model.to(device)     # Accelerate's wrapper of .to(): offloaded weights are meta until their forward
""", fix=DEVICE_MAP + """
# the same map given to from_pretrained: each weight is read from the checkpoint straight to its place, the
# offloaded blocks to the folder (Transformers calls dispatch_model for it), none is copied through RAM first
model = AutoModelForCausalLM.from_pretrained(path, device_map=device_map, offload_folder=tempfile.mkdtemp())
print(model.hf_device_map)   # leave the placement to Accelerate's hooks, and call the model as it is
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
with torch.inference_mode():
    logits = model(input_ids).logits   # each offloaded block is read from the disk for its forward pass
print(prompt, "->", repr(tokenizer.decode(logits[0, -1].argmax())))
"""),
)
def offloaded_moved(lab: Lab, r: BreakResult) -> None:
    model = lab.copy()
    blocks_name, mods = blocks(model)
    dmap = _offload_map(model, blocks_name, len(mods))
    with tempfile.TemporaryDirectory(prefix="breakit-offload-") as folder:
        logs: list[str] = []
        with capture_logs(logs):
            model = dispatch_model(model, device_map=dmap, main_device="cpu", offload_dir=folder)
        r.warnings.extend(logs)
        r.hf_device_map = {k: str(v) for k, v in model.hf_device_map.items()}
        last = f"{blocks_name}.{len(mods) - 1}"
        (n0, p0), (n1, p1) = (next(model.get_submodule(f"{blocks_name}.0").named_parameters()),
                              next(model.get_submodule(last).named_parameters()))
        r.tensors = [row(f"{blocks_name}.0.{n0}", p0), row(f"{last}.{n1}", p1)]
        attempt(r, lambda: move(model, "cpu"))
    run_fix(lab, offloaded_moved, r)



SCENARIOS = (meta_weights_run, meta_weights_moved, offloaded_moved)
