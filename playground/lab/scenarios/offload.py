"""Offload mistakes: a model loaded with Accelerate's big-model machinery, some blocks on the disk, used as if whole.

Every scenario here runs for real on any machine: its scripts load the bundled model with a `device_map`
that sends blocks to the disk (`from_pretrained(..., device_map=..., offload_folder=...)`), so the offloaded
weights sit on the `meta` device with their values read from the checkpoint by Accelerate's hooks for each
forward pass. The lab runs the broken script's own text, then the fix's (`attempt_script`, `run_fix`).
"""

from __future__ import annotations

from playground.core.i18n import W
from playground.lab.harness import Lab, attempt_script, row, run_fix, scenario
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scripts import Script

IMPORTS = "import tempfile"
# Where the kept blocks run: a GPU by its index (as device maps name one), else the CPU.
ON = 'on = 0 if device == "cuda" else "cpu"   # where the kept blocks run: a GPU by its index, or the CPU\n'
EMBEDDING_OFF = ON + """device_map = {"transformer.wte": "disk", "lm_head": "disk",    # the embedding (tied to the head): the largest
              "transformer.wpe": on, "transformer.drop": on, "transformer.h": on, "transformer.ln_f": on}
model = AutoModelForCausalLM.from_pretrained(path, device_map=device_map, offload_folder=tempfile.mkdtemp())
"""
LAST_OFF = ON + """device_map = {"transformer.wte": on, "lm_head": on, "transformer.wpe": on, "transformer.drop": on,
              "transformer.h.0": on, "transformer.h.1": on, "transformer.h.2": on,
              "transformer.h.3": "disk", "transformer.ln_f": on}    # the last block on the disk
model = AutoModelForCausalLM.from_pretrained(path, device_map=device_map, offload_folder=tempfile.mkdtemp())
"""
GREEDY = """
with torch.inference_mode():
    out = model.generate(input_ids, max_new_tokens=8, do_sample=False)
print(prompt, "->", repr(tokenizer.decode(out[0, input_ids.shape[1]:])))
"""


def _placed_rows(ns: dict, names: tuple[str, ...]) -> list:
    model = ns.get("model")
    out = [row("input_ids", ns["input_ids"])] if "input_ids" in ns else []
    for name in names:
        try:
            out.append(row(name, model.get_parameter(name)))
        except (AttributeError, KeyError):
            pass
    return out


@scenario(
    "offload-inputs-model-device", 27,
    title=W("Inputs sent to model.device when the first block is offloaded",
            "第一个块被卸载时，把输入送到了 model.device"),
    explain=W(
        "`model.device` is the device of the model's first parameter. Here the embedding (the largest tensor, tied "
        "to the head) was offloaded to the disk, so its weight sits on `meta` until Accelerate's hook loads it for "
        "a forward pass: `model.device` says `meta`, and `input_ids.to(model.device)` makes a tensor with no data. "
        "The hook then tries to move it to where the embedding runs and cannot copy out of meta. Leave the inputs "
        "on the CPU (or put them where the first block runs, `hf_device_map`'s device): Accelerate's hooks move "
        "inputs to each block's execution device themselves.",
        "`model.device` 是模型第一个参数所在的设备。这里词嵌入（最大的张量，与输出层绑定）被卸载到了磁盘，"
        "所以它的权重在 `meta` 上，直到 Accelerate 的钩子在前向传播时把它加载进来：`model.device` 显示 `meta`，"
        "而 `input_ids.to(model.device)` 得到的是一个没有数据的张量。随后钩子要把它搬到词嵌入运行的设备上，"
        "却无法从 meta 拷贝。把输入留在 CPU 上（或放到第一个块运行的设备，即 `hf_device_map` 里的设备）："
        "Accelerate 的钩子会自己把输入搬到每个块的执行设备上。"),
    before="input_ids = input_ids.to(model.device)   # meta: the offloaded embedding's device\nmodel(input_ids)",
    after="input_ids = input_ids                       # the CPU: the hooks move it where each block runs\nmodel(input_ids)",
    # Accelerate's send_to_device (in the embedding's hook) copies the meta input_ids to the CPU
    expect=Outcome(NotImplementedError, r"Cannot copy out of meta tensor"),
    group="offload",
    bundled_only=True,
    script=Script("lm", imports=IMPORTS, broken=EMBEDDING_OFF + """
print("model.device:", model.device)   # the first parameter's device: the offloaded embedding's, meta
input_ids = tokenizer(prompt, return_tensors="pt").input_ids.to(model.device)
with torch.inference_mode():
    logits = model(input_ids).logits   # the embedding's hook moves input_ids to where it runs: out of meta
""", fix=EMBEDDING_OFF + """
print("model.device:", model.device, "| the embedding runs on:", model.hf_device_map["transformer.wpe"])
input_ids = tokenizer(prompt, return_tensors="pt").input_ids   # on the CPU: Accelerate's hooks move it
""" + GREEDY),
)
def offload_inputs_model_device(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, offload_inputs_model_device, r)
    r.tensors = _placed_rows(ns, ("transformer.wte.weight", "transformer.wpe.weight"))
    r.hf_device_map = {k: str(v) for k, v in (getattr(ns.get("model"), "hf_device_map", None) or {}).items()}
    run_fix(lab, offload_inputs_model_device, r)


@scenario(
    "offload-weight-read", 28,
    title=W("An offloaded weight read directly: its values are on meta",
            "直接读取被卸载的权重：它的值在 meta 上"),
    explain=W(
        "Accelerate keeps an offloaded weight on the `meta` device (`p.device` says `meta`) and its values "
        "elsewhere: in a CPU state dict, or in a file (here the memory-mapped checkpoint), brought in by the "
        "module's hook only for the forward pass and put back after. Read directly, outside a forward pass, the "
        "weight has shape and dtype but no data: `.item()` on it, or `.cpu()`, or `.numpy()`, fails. Read it "
        "the way the forward pass does: `accelerate.utils.align_module_device(module)` brings the module's weights "
        "in for the duration (or use `model.state_dict()` only on a model that is not offloaded; `save_pretrained` "
        "gathers offloaded weights for you).",
        "Accelerate 把被卸载的权重放在 `meta` 设备上（`p.device` 显示 `meta`），值保存在别处：CPU 上的 `state_dict`，"
        "或一个文件（这里是内存映射的检查点），只在前向传播时由模块的钩子搬进来，结束后再放回去。"
        "在前向传播之外直接读取时，这个权重只有形状和数据类型，没有数据：对它调用 `.item()`、`.cpu()` 或 "
        "`.numpy()` 都会失败。要像前向传播那样读取：`accelerate.utils.align_module_device(module)` "
        "会在上下文期间把该模块的权重搬进来（`save_pretrained` 也会替你收集被卸载的权重）。"),
    before="for name, p in model.named_parameters():\n    print(name, p.abs().mean().item())",
    after="for name, module in model.named_modules():\n    with align_module_device(module):\n"
          "        for p in module.parameters(recurse=False):\n            print(name, p.abs().mean().item())",
    expect=Outcome(RuntimeError, r"cannot be called on meta tensors"),
    group="offload",
    bundled_only=True,
    script=Script("lm", imports=IMPORTS + "\nfrom accelerate.utils import align_module_device", broken=LAST_OFF + """
for name, p in model.named_parameters():     # e.g. checking each weight's scale
    print(f"{name:40s} {str(p.device):5s} {p.abs().mean().item():.4f}")   # an offloaded weight: meta, no data
""", fix=LAST_OFF + """
for name, module in model.named_modules():
    with align_module_device(module):        # the hook brings offloaded weights in, as for a forward pass
        for pname, p in module.named_parameters(recurse=False):
            print(f"{name + '.' + pname:40s} {str(p.device):5s} {p.abs().mean().item():.4f}")
print("after: transformer.h.3's weights are back on", model.transformer.h[3].mlp.c_fc.weight.device)
"""),
)
def offload_weight_read(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, offload_weight_read, r)
    r.tensors = _placed_rows(ns, ("transformer.h.0.mlp.c_fc.weight", "transformer.h.3.mlp.c_fc.weight"))
    r.hf_device_map = {k: str(v) for k, v in (getattr(ns.get("model"), "hf_device_map", None) or {}).items()}
    run_fix(lab, offload_weight_read, r)


@scenario(
    "offload-state-dict-saved", 29,
    title=W("An offloaded model saved with torch.save(model.state_dict())",
            "用 torch.save(model.state_dict()) 保存被卸载的模型"),
    explain=W(
        "`state_dict()` hands back the tensors as they are, and an offloaded block's are on `meta`: `torch.save` "
        "writes them without complaint, shapes and no data, so the file is silently missing those weights. The "
        "error comes later, when the file is loaded into a model: `load_state_dict` cannot copy out of a meta "
        "tensor. Save an offloaded model with `model.save_pretrained(folder)`, which brings each offloaded weight "
        "in from its store as it writes it.",
        "`state_dict()` 原样返回张量，而被卸载块的张量在 `meta` 上：`torch.save` 毫无怨言地把它们写进文件，"
        "只有形状，没有数据，于是文件里悄悄少了这些权重。错误要到之后才出现：把文件加载进模型时，"
        "`load_state_dict` 无法从 meta 张量拷贝。保存被卸载的模型要用 `model.save_pretrained(folder)`，"
        "它在写入每个被卸载的权重时会从其存储处取回数据。"),
    before="torch.save(model.state_dict(), \"model.pt\")   # offloaded blocks: meta, no data",
    after="model.save_pretrained(folder)   # brings each offloaded weight in as it writes it",
    # load_state_dict copying a meta tensor from the file into the fresh model's parameter
    expect=Outcome(RuntimeError, r"(?s)Error\(s\) in loading state_dict.*Cannot copy out of meta tensor"),
    group="offload",
    bundled_only=True,
    script=Script("lm", imports=IMPORTS, broken=LAST_OFF + """
folder = tempfile.mkdtemp()
torch.save(model.state_dict(), f"{folder}/model.pt")   # no error: the offloaded tensors are written as meta
saved = torch.load(f"{folder}/model.pt", weights_only=True)
print("devices in the file:", sorted({str(t.device) for t in saved.values()}))
fresh = AutoModelForCausalLM.from_pretrained(path)
fresh.load_state_dict(saved)                            # a meta tensor has nothing to copy
""", fix=LAST_OFF + """
folder = tempfile.mkdtemp()
model.save_pretrained(folder)                           # each offloaded weight read from its store as it is written
fresh = AutoModelForCausalLM.from_pretrained(folder)
original = AutoModelForCausalLM.from_pretrained(path)
same = all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), original.state_dict().values()))
print("every weight saved, and equal to the checkpoint's:", same)
assert same
"""),
)
def offload_state_dict_saved(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, offload_state_dict_saved, r)
    r.tensors = _placed_rows(ns, ("transformer.h.3.mlp.c_fc.weight",))
    saved = ns.get("saved") or {}
    if "transformer.h.3.mlp.c_fc.weight" in saved:
        r.tensors.append(row("saved['transformer.h.3.mlp.c_fc.weight']", saved["transformer.h.3.mlp.c_fc.weight"]))
    r.hf_device_map = {k: str(v) for k, v in (getattr(ns.get("model"), "hf_device_map", None) or {}).items()}
    run_fix(lab, offload_state_dict_saved, r)


MEASURED = W("blocks Accelerate sent to the disk", "Accelerate 放到磁盘上的块数")
TIMED = """
input_ids = tokenizer(prompt, return_tensors="pt").input_ids
with torch.inference_mode():
    model.generate(input_ids, max_new_tokens=2, do_sample=False)            # warm-up
    t0 = time.perf_counter()
    out = model.generate(input_ids, max_new_tokens=16, min_new_tokens=16, do_sample=False)
    seconds = time.perf_counter() - t0                                       # the CPU: no device to wait for
rate = 16 / seconds
on_disk = [k for k, v in getattr(model, "hf_device_map", {}).items() if v == "disk"]
print(f"{len(on_disk)} block(s) on the disk; 16 tokens at {rate:.1f} tokens/s")
"""


@scenario(
    "offload-warning-ignored", 30,
    title=W("device_map=\"auto\" with too little memory: Accelerate's one warning, unread",
            "device_map=\"auto\" 但内存给得太少：Accelerate 唯一的那条警告没人看"),
    explain=W(
        "With `device_map=\"auto\"` and a `max_memory` below the model's size, nothing fails: Accelerate's planner "
        "sends the blocks that do not fit to the disk, and the only sign is one logged line, \"Some parameters are "
        "on the meta device because they were offloaded to the ...\". It lists every \"cpu\" and \"disk\" value in "
        "the device map, so on a machine without a GPU it names the cpu too, although the blocks there are in RAM "
        "as usual. Those on the disk are read back for every forward pass: generation gets slower (measured below). "
        "Ask the planner before loading (`infer_auto_device_map` on the model built with `init_empty_weights`), "
        "give it the memory the model needs, and check `model.hf_device_map`.",
        "使用 `device_map=\"auto\"` 而 `max_memory` 小于模型大小时，什么也不会报错：Accelerate 的规划器把放不下的块"
        "放到磁盘上，唯一的迹象是日志里的一行：“Some parameters are on the meta device because they were "
        "offloaded to the ...”。它会列出 device map 中所有的 \"cpu\" 和 \"disk\" 值，所以在没有 GPU 的机器上它也会提到 "
        "cpu，尽管那里的块照常在内存中。放在磁盘上的块每次前向传播都要重新读取：生成会变慢（下面有测量）。"
        "加载之前先问规划器（对用 `init_empty_weights` 构建的模型调用 `infer_auto_device_map`），"
        "给它模型所需的内存，并检查 `model.hf_device_map`。"),
    before='model = AutoModelForCausalLM.from_pretrained(path, device_map="auto", max_memory={"cpu": "12MB"},\n'
           '                                             offload_folder=folder)',
    after='plan = infer_auto_device_map(empty_model, max_memory={"cpu": "12MB"}, no_split_module_classes=...)\n'
          '# blocks on "disk" in the plan: give it more memory\n'
          'model = AutoModelForCausalLM.from_pretrained(path, device_map="auto", max_memory={"cpu": "64MB"})\n'
          'assert "disk" not in model.hf_device_map.values()',
    expect=Outcome(None, warning=r"Some parameters are on the meta device because they were offloaded to the"),
    group="offload",
    silent=True,
    bundled_only=True,
    labels={"blocks_on_disk": MEASURED,
            "offloaded_tokens_per_second": W("tokens/s with those blocks on the disk (16 greedy tokens)",
                                             "这些块在磁盘上时的 tokens/s（16 个贪心 token）"),
            "fitted_tokens_per_second": W("tokens/s with the memory it needs (the same 16 tokens)",
                                          "给足所需内存时的 tokens/s（同样 16 个 token）"),
            "same_tokens": W("both chose the same tokens", "两者选出的 token 相同")},
    script=Script("lm", imports=IMPORTS + "\nimport time\nfrom accelerate import init_empty_weights\n"
                  "from accelerate.utils import infer_auto_device_map", broken="""
model = AutoModelForCausalLM.from_pretrained(path, device_map="auto", max_memory={"cpu": "12MB"},
                                             offload_folder=tempfile.mkdtemp())   # logs one line, raises nothing
""" + TIMED, fix="""
with init_empty_weights():
    empty = AutoModelForCausalLM.from_config(model.config)   # shapes only: nothing allocated
empty.tie_weights()
plan = infer_auto_device_map(empty, max_memory={"cpu": "12MB"}, no_split_module_classes=empty._no_split_modules)
print("12MB would send to the disk:", [k for k, v in plan.items() if v == "disk"])
model = AutoModelForCausalLM.from_pretrained(path, device_map="auto", max_memory={"cpu": "64MB"})
assert "disk" not in getattr(model, "hf_device_map", {}).values()   # every block in RAM
""" + TIMED),
)
def offload_warning_ignored(lab: Lab, r: BreakResult) -> None:
    broken = attempt_script(lab, offload_warning_ignored, r)
    fixed = run_fix(lab, offload_warning_ignored, r)
    r.hf_device_map = {k: str(v) for k, v in (getattr(broken.get("model"), "hf_device_map", None) or {}).items()}
    r.tensors = _placed_rows(broken, ("transformer.h.3.mlp.c_fc.weight",))
    if "rate" in broken and "rate" in fixed:
        r.measured = {"blocks_on_disk": len(broken["on_disk"]),
                      "offloaded_tokens_per_second": round(broken["rate"], 1),
                      "fitted_tokens_per_second": round(fixed["rate"], 1),
                      "same_tokens": bool(broken["out"].tolist() == fixed["out"].tolist())}


SCENARIOS = (offload_inputs_model_device, offload_weight_read, offload_state_dict_saved, offload_warning_ignored)
