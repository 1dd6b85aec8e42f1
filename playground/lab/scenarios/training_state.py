"""Training-state mistakes: the optimizer and `.to()`, checkpoints of a training run, DataParallel.

The same training step as `playground.lab.scenarios.training` (its STEP), changed in one place,
or a checkpoint of it loaded back. These raise live on this CPU (a checkpoint recorded on a GPU,
a DataParallel state_dict), run PyTorch's own DataParallel check on a wrapper built as a GPU host
builds it, or are silent and measured (the optimizer made before `.to()`, `strict=False`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

from playground.core.i18n import W, said
from playground.hw import devices
from playground.lab.capture import attempt
from playground.lab.harness import Lab, attempt_script, mark, row, run_fix, scenario
from playground.lab.library_text import source_line
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scenarios.checkpoints import DESERIALIZE_ON_CUDA, as_saved, save_tagged
from playground.lab.scenarios.training import STEP, batch, changed
from playground.lab.scripts import Script
from playground.lab.target import Host

OPTIMIZER = "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
EARLY = changed("model = model.to(device)\n", OPTIMIZER + "model = model.to(device)   # moved after the optimizer "
                "was made\n", STEP).replace("model.train()\n" + OPTIMIZER, "model.train()\n", 1)

LABELS_OPT = {
    "still_the_model_parameters_after_to_float64": W(
        "an optimizer made before model.to(torch.float64) still holds the model's parameters (the in-place path "
        "CPU and GPU moves take)", "在 model.to(torch.float64) 之前创建的优化器仍持有模型的参数（CPU 与 GPU 之间移动走的就地路径）"),
    "still_the_model_parameters_after_to_meta": W(
        "an optimizer made before model.to('meta') still holds the model's parameters (a move that path does not "
        "cover)", "在 model.to('meta') 之前创建的优化器仍持有模型的参数（这条路径不覆盖的移动）"),
    "state_made_before_the_move": W("AdamW state from a step taken before model.to(torch.float64): its dtype",
                                    "在 model.to(torch.float64) 之前走一步产生的 AdamW 状态：它的数据类型"),
}


def _one_step(model, optimizer, input_ids, labels) -> None:
    logits = model(input_ids).logits
    torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten()).backward()
    optimizer.step()
    optimizer.zero_grad()


@scenario(
    "optimizer-before-to", 19,
    title=W("Training: the optimizer created before model.to(device) (not a mistake)",
            "训练：在 model.to(device) 之前创建优化器（并不是错误）"),
    explain=W(
        "The tutorials insist on moving the model first and creating the optimizer after. For a move between "
        "the CPU and a GPU the order does not matter: `Module.to()` swaps each parameter's data in place when "
        "the old and new tensors are of compatible kinds (dense CPU and CUDA tensors are), keeping the same "
        "`nn.Parameter` objects, so an optimizer made before holds the very tensors the model computes with. "
        "Measured below with a dtype change, which takes the same path; a move to meta, which does not, "
        "gives new objects. What does stay behind is optimizer *state* made before the move (after a step): "
        "AdamW's moments keep their old device and dtype, and the next step on a GPU raises. The tutorials' "
        "order is a safe habit; what matters is to move before the first step.",
        "教程坚持先移动模型、再创建优化器。对 CPU 与 GPU 之间的移动，顺序无关紧要："
        "当新旧张量类型兼容时（稠密的 CPU 和 CUDA 张量是兼容的），`Module.to()` 就地替换每个参数的数据，"
        "`nn.Parameter` 对象保持不变，所以之前创建的优化器持有的正是模型用来计算的那些张量。"
        "下面用数据类型转换实测，它走同一条路径；移动到 meta 不走这条路径，会得到新对象。"
        "真正会留在原地的是移动之前（走过一步之后）产生的优化器*状态*："
        "AdamW 的动量保持原来的设备和数据类型，下一步在 GPU 上就会报错。"
        "教程的顺序是稳妥的习惯；关键是在第一步之前移动模型。",
    ),
    before="optimizer = AdamW(model.parameters())\nmodel = model.to(device)",
    after="model = model.to(device)\noptimizer = AdamW(model.parameters())",
    expect=Outcome(None),
    group="training",
    silent=True,
    harmless=True,
    bundled_only=True,
    labels=LABELS_OPT,
    script=Script("train", broken=EARLY + """
print("the optimizer's parameters are the model's:",
      all(p is q for p, q in zip(optimizer.param_groups[0]["params"], model.parameters())))
""", fix=STEP),
)
def optimizer_before_to(lab: Lab, r: BreakResult) -> None:
    input_ids, labels = batch(lab)

    def kept(move) -> bool:
        model = lab.copy()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        move(model)
        return all(p is q for p, q in zip(optimizer.param_groups[0]["params"], model.parameters()))

    model = lab.copy().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    _one_step(model, optimizer, input_ids, labels)  # state made before the move
    model.to(torch.float64)
    state = next(iter(optimizer.state.values()))
    r.measured = {
        "still_the_model_parameters_after_to_float64": kept(lambda m: m.to(torch.float64)),
        "still_the_model_parameters_after_to_meta": kept(lambda m: m.to("meta")),
        "state_made_before_the_move": str(state["exp_avg"].dtype).removeprefix("torch."),
    }
    r.tensors = [row("optimizer.param_groups[0]['params'][0]", optimizer.param_groups[0]["params"][0]),
                 row("exp_avg", state["exp_avg"], "ui.row.before_move")]
    attempt_script(lab, optimizer_before_to, r)
    run_fix(lab, optimizer_before_to, r)


GPU_TRAINING_CHECKPOINT = """
import tempfile
gpu = f"cuda:{torch.cuda.device_count()}"   # cuda:0 on this machine; a GPU that is not there, on a GPU host
# A checkpoint of a training run as a GPU machine writes it (torch.serialization lets this machine record that).
torch.serialization.register_package(0, lambda storage: gpu, lambda storage, location: None)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
logits = model(input_ids).logits
nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten()).backward()
optimizer.step()                             # one step: AdamW now has state (step, exp_avg, exp_avg_sq)
ckpt = tempfile.mkdtemp() + "/checkpoint.pt"
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, ckpt)
"""
RESUME = """
model.load_state_dict(checkpoint["model"])
model = model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
optimizer.load_state_dict(checkpoint["optimizer"])   # casts the state to each parameter's device (and dtype)
state = optimizer.state[optimizer.param_groups[0]["params"][0]]
print("saved on", gpu, "| exp_avg now on", state["exp_avg"].device, "| step on", state["step"].device)
"""


@scenario(
    "optimizer-state-from-gpu", 20,
    title=W("Training: resuming from a checkpoint saved on a GPU, without map_location",
            "训练：从 GPU 上保存的检查点恢复训练，却没有 map_location"),
    explain=W(
        "A training checkpoint holds the model's `state_dict` and the optimizer's, whose state (AdamW's "
        "moments) lived on the GPU, and `torch.save` recorded that device for every storage. Without "
        "`map_location`, `torch.load` restores each one there, and this machine has no CUDA. Load onto the "
        "CPU, then let the objects place their tensors: `model.load_state_dict` copies into the model's "
        "own tensors, and `optimizer.load_state_dict` casts each state tensor to the device (and floating "
        "dtype) of its parameter, as the fix's output shows, so build the optimizer after `model.to()`.",
        "训练检查点里有模型的 `state_dict` 和优化器的 `state_dict`，"
        "后者的状态（AdamW 的动量）在 GPU 上，`torch.save` 为每个存储都记下了那个设备。"
        "没有 `map_location`，`torch.load` 会把每个存储恢复到那里，而这台机器没有 CUDA。"
        "先加载到 CPU，再让各个对象放置自己的张量：`model.load_state_dict` 复制进模型自己的张量，"
        "`optimizer.load_state_dict` 把每个状态张量转换到它的参数所在的设备（和浮点数据类型），"
        "修复后的输出显示了这一点，所以要在 `model.to()` 之后创建优化器。",
    ),
    before='checkpoint = torch.load("checkpoint.pt")',
    after='checkpoint = torch.load("checkpoint.pt", map_location="cpu", weights_only=True)\n'
          "model.load_state_dict(checkpoint['model']); model.to(device)\n"
          "optimizer.load_state_dict(checkpoint['optimizer'])",
    expect=Outcome(RuntimeError, DESERIALIZE_ON_CUDA),
    group="training",
    bundled_only=True,
    script=Script("train", setup=GPU_TRAINING_CHECKPOINT, broken="""
checkpoint = torch.load(ckpt, weights_only=True)   # no map_location: every storage restored on the GPU
""" + RESUME, fix="""
checkpoint = torch.load(ckpt, map_location="cpu", weights_only=True)   # everything onto the CPU first
""" + RESUME),
)
def optimizer_state_from_gpu(lab: Lab, r: BreakResult) -> None:
    input_ids, labels = batch(lab)
    model = lab.copy().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    _one_step(model, optimizer, input_ids, labels)
    gpu = f"cuda:{devices.cuda_count()}"
    with tempfile.TemporaryDirectory(prefix="breakit-resume-") as folder:
        ckpt = str(Path(folder) / "checkpoint.pt")
        save_tagged({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, ckpt, gpu)
        r.tensors = [as_saved(ckpt, "exp_avg", lambda c: c["optimizer"]["state"][0]["exp_avg"])]
        attempt_script(lab, optimizer_state_from_gpu, r, ckpt=ckpt, gpu=gpu)
        run_fix(lab, optimizer_state_from_gpu, r, ckpt=ckpt, gpu=gpu)


def data_parallel_as_on_a_gpu_host(module, devices: int = 2):
    """`nn.DataParallel(module)` as its constructor sets it up on a host with `devices` GPUs (device_ids=[0, 1, ...],
    source device cuda:0), where it leaves the module where it is (with one GPU it moves it: see the scenario).

    Built the same way on a host with fewer GPUs: there the constructor would make a pass-through wrapper
    (device_ids=[], no GPU) or move the module itself (one GPU), so the attributes its forward reads are set here
    as it sets them on a multi-GPU host; the forward is DataParallel's own."""
    dp = torch.nn.DataParallel.__new__(torch.nn.DataParallel)
    torch.nn.Module.__init__(dp)
    dp.module, dp.dim, dp.device_ids, dp.output_device = module, 0, list(range(devices)), 0
    dp.src_device_obj = torch.device("cuda", 0)
    return dp


def call_data_parallel(dp, input_ids):
    return dp(input_ids)


def parameters_on(make) -> str:
    """Where the module `make()` returns keeps its parameters, or what making it raised (its type and first line)."""
    try:
        return str(next(make().parameters()).device)
    except Exception as e:  # measured, not hidden: the page shows what this host's constructor did
        return f"raises {type(e).__name__}: {str(e).splitlines()[0][:160]}"


def one_gpu_constructor() -> dict:
    """What `nn.DataParallel(module)` does with one visible GPU: the installed constructor's line that moves the
    module there, and, on a host with exactly one GPU, where a wrapped module's parameters land (live)."""
    out = {"one_gpu_constructor": source_line(torch.nn.DataParallel.__init__, "self.module.to(self.src_device_obj)")}
    if Host.here().cuda == 1:
        out["one_gpu_wrapped_on"] = str(next(torch.nn.DataParallel(torch.nn.Linear(2, 2)).parameters()).device)
    return out


LABELS_DP = {
    "wrap_then_to_meta": W("nn.DataParallel(model).to('meta'): the inner model's parameters on",
                           "nn.DataParallel(model).to('meta')：内部模型的参数所在设备"),
    "to_meta_then_wrap": W("nn.DataParallel(model.to('meta')): the inner model's parameters on",
                           "nn.DataParallel(model.to('meta'))：内部模型的参数所在设备"),
    "one_gpu_constructor": W("with one visible GPU, the constructor moves the module itself (the installed source)",
                             "只有一块可见 GPU 时，构造函数自己移动模块（已安装的源码）"),
    "one_gpu_wrapped_on": W("nn.DataParallel(model) on this one-GPU host: the inner model's parameters on (live)",
                            "在这台只有一块 GPU 的机器上 nn.DataParallel(model)：内部模型的参数所在设备（实测）"),
}


@scenario(
    "dataparallel-not-moved", 21,
    title=W("Training: nn.DataParallel around a model that was never moved",
            "训练：用 nn.DataParallel 包装了一个从没移动过的模型"),
    explain=W(
        "`nn.DataParallel` replicates the module onto every GPU for each forward pass, from its copy on "
        "`device_ids[0]`, and checks first that every parameter and buffer is there. The tutorial's "
        "comment says to move the model before wrapping it, while its code wraps first: both orders work, "
        "because `DataParallel` is a module and `.to()` reaches the model inside (measured below with the "
        "meta device). What fails is not moving it at all, and only with two GPUs or more: with one visible "
        "GPU the constructor moves the module there itself (the line is quoted below), and the forgotten "
        "`.to(device)` goes unnoticed. Prefer `DistributedDataParallel` for real multi-GPU training.",
        "`nn.DataParallel` 在每次前向传播时，把 `device_ids[0]` 上的模块复制到每块 GPU，"
        "开始前先检查每个参数和缓冲区都在那里。教程的注释说要先移动再包装，代码却先包装："
        "两种顺序都可以，因为 `DataParallel` 本身也是模块，`.to()` 会到达里面的模型"
        "（下面用 meta 设备实测）。真正会失败的是根本不移动，而且只在有两块或更多 GPU 时："
        "只有一块可见 GPU 时，构造函数会自己把模块移过去（下面引用了这一行），忘掉的 `.to(device)` 不会被发现。"
        "真正的多 GPU 训练更推荐 `DistributedDataParallel`。",
    ),
    before="model = nn.DataParallel(model)",
    after="model = nn.DataParallel(model).to(device)   # or move first, then wrap: the same",
    needs_gpu=True,
    devices=2,  # with one GPU the constructor moves the module itself: the mistake shows with two or more
    real_on=("cuda",),  # DataParallel replicates over CUDA devices only
    # the check in torch/nn/parallel/data_parallel.py, plain Python: the same words on a GPU
    expect={kind: Outcome(RuntimeError, r"module must have its parameters and buffers on device cuda:\d+ "
                                        r"\(device_ids\[0\]\) but found one of them on device: cpu")
            for kind in ("simulated", "cuda2")},
    group="training",
    bundled_only=True,
    labels=LABELS_DP,
    script=Script("train", broken=changed("model = model.to(device)\n", "model = nn.DataParallel(model)   # "
                                          "model.to(device) forgotten\n", STEP),
                  fix=changed("model = model.to(device)\n", "model = nn.DataParallel(model).to(device)\n", STEP)),
    words={
        "simulation": W(
            "This machine has fewer than two GPUs: without a GPU, nn.DataParallel's constructor makes a "
            "pass-through wrapper (device_ids=[]); with one, it moves the module to that GPU itself. The lab set "
            "the wrapper's attributes as the constructor sets them on a host with two GPUs (device_ids=[0, 1], "
            "source device cuda:0), where the module stays where it is; the forward that raised above is "
            "DataParallel's own, unchanged. The fixed step below ran for real on this machine's `device`.",
            "这台机器的 GPU 少于两块：没有 GPU 时，nn.DataParallel 的构造函数只生成一个直通包装（device_ids=[]）；"
            "有一块时，它自己把模块移到那块 GPU 上。实验室按有两块 GPU 的机器上构造函数的做法设置了包装的属性"
            "（device_ids=[0, 1]，源设备 cuda:0），在那里模块留在原处；"
            "上面抛出错误的 forward 是 DataParallel 自己的，未作改动。下面修复后的训练步骤在这台机器的 `device` 上真实运行。",
        ),
        "one_gpu": W(
            "With one visible GPU this mistake raises nothing: nn.DataParallel's constructor moves the module to "
            "that GPU itself (`{line}`), and the broken step trains there. It raises with two GPUs or more.",
            "只有一块可见 GPU 时，这个错误不会报错：nn.DataParallel 的构造函数自己把模块移到那块 GPU 上"
            "（`{line}`），出错的训练步骤照样在那里训练。有两块或更多 GPU 时才会报错。",
        ),
    },
)
def dataparallel_not_moved(lab: Lab, r: BreakResult) -> None:
    r.measured = {
        "wrap_then_to_meta": parameters_on(lambda: torch.nn.DataParallel(torch.nn.Linear(2, 2)).to("meta")),
        # with one visible GPU the constructor moves the module to it: from meta that raises (no data to copy)
        "to_meta_then_wrap": parameters_on(lambda: torch.nn.DataParallel(torch.nn.Linear(2, 2).to("meta"))),
        **one_gpu_constructor(),
    }
    input_ids, _labels = batch(lab)
    model = lab.copy().train()
    # two GPUs or more here: DataParallel's own constructor (it leaves the module on the CPU); else built as there
    dp = torch.nn.DataParallel(model) if not lab.run.target.simulated else data_parallel_as_on_a_gpu_host(model)
    r.tensors = [row("input_ids", input_ids), row("module.transformer.wte.weight", model.get_input_embeddings().weight)]
    attempt(r, lambda: call_data_parallel(dp, input_ids))
    mark(lab, r, "scenario.dataparallel-not-moved.simulation", "", device="cpu")
    r.notes.append(said("scenario.dataparallel-not-moved.one_gpu", line=r.measured["one_gpu_constructor"]))
    if r.simulated and r.raised:  # the check is plain Python in torch/nn/parallel/data_parallel.py: a GPU words it so
        r.real_gpu_message = r.error_message
    run_fix(lab, dataparallel_not_moved, r)


DP_CHECKPOINT = """
import tempfile
ckpt = tempfile.mkdtemp() + "/model.pt"
torch.save(nn.DataParallel(model).state_dict(), ckpt)   # saved from the wrapper: every key starts with "module."
"""
STRIP = ('nn.modules.utils.consume_prefix_in_state_dict_if_present(state_dict, "module.")   '
         "# the wrapper's prefix, removed\n")


@scenario(
    "dataparallel-prefix", 22,
    title=W("Training: a state_dict saved from DataParallel loaded into a plain model",
            "训练：把从 DataParallel 保存的 state_dict 加载进普通模型"),
    explain=W(
        "`nn.DataParallel` (and `DistributedDataParallel`) keeps the model as its submodule `module`, so "
        "its `state_dict()` names every tensor `module.transformer...`. A plain model expects "
        "`transformer...`: `load_state_dict` (strict by default) lists every key as missing and every "
        "saved one as unexpected, live below. Save `model.module.state_dict()` from the wrapper, or strip "
        "the prefix when loading: `torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "
        "'module.')`.",
        "`nn.DataParallel`（以及 `DistributedDataParallel`）把模型作为子模块 `module` 保存，"
        "所以它的 `state_dict()` 给每个张量起名 `module.transformer...`。"
        "普通模型期待的是 `transformer...`：`load_state_dict`（默认严格）把每个键都列为缺失，"
        "把每个保存的键都列为多余，下面是实时结果。保存时用包装器的 `model.module.state_dict()`，"
        "或者加载时去掉前缀：`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "
        "'module.')`。",
    ),
    before="model.load_state_dict(torch.load(ckpt))",
    after='sd = torch.load(ckpt)\nconsume_prefix_in_state_dict_if_present(sd, "module.")\nmodel.load_state_dict(sd)',
    # nn.Module.load_state_dict's strict check (torch/nn/modules/module.py)
    expect=Outcome(RuntimeError, r"Missing key\(s\) in state_dict.*Unexpected key\(s\).*\"module\."),
    group="training",
    bundled_only=True,
    script=Script("train", setup=DP_CHECKPOINT, broken="""
state_dict = torch.load(ckpt, map_location="cpu", weights_only=True)
print("first key in the file:", next(iter(state_dict)))
model.load_state_dict(state_dict)          # strict=True: every key must match
""", fix="""
state_dict = torch.load(ckpt, map_location="cpu", weights_only=True)
""" + STRIP + """model.load_state_dict(state_dict)
model = model.to(device)
print("first key:", next(iter(state_dict)), "| loaded into the plain model, on", model.device)
"""),
)
def dataparallel_prefix(lab: Lab, r: BreakResult) -> None:
    with tempfile.TemporaryDirectory(prefix="breakit-dp-") as folder:
        ckpt = str(Path(folder) / "model.pt")
        torch.save(torch.nn.DataParallel(lab.copy()).state_dict(), ckpt)
        ns = attempt_script(lab, dataparallel_prefix, r, ckpt=ckpt)
        if "state_dict" in ns:
            first = next(iter(ns["state_dict"]))
            r.tensors = [row(first, ns["state_dict"][first], "ui.row.in_file"),
                         *[row(name, t, "ui.row.in_model") for name, t in list(ns["model"].state_dict().items())[:1]]]
        run_fix(lab, dataparallel_prefix, r, ckpt=ckpt)


LABELS_STRICT = {
    "missing_keys": W("keys the model has and the file lacks (strict=False: no error)",
                      "模型有而文件缺少的键（strict=False：不报错）"),
    "unexpected_keys": W("keys the file has and the model lacks", "文件有而模型缺少的键"),
    "loss_of_the_trained_model": W("loss of the model that was saved, on the batch", "被保存的模型在这一批上的损失"),
    "loss_after_strict_false_load": W("loss after load_state_dict(strict=False), same batch",
                                      "load_state_dict(strict=False) 之后，同一批上的损失"),
}


@scenario(
    "strict-false-hides", 23,
    title=W("Training: load_state_dict(strict=False) silencing a checkpoint that did not load",
            "训练：load_state_dict(strict=False) 掩盖了没有加载成功的检查点"),
    explain=W(
        "`strict=False` turns key mismatches from an error into a returned list, and the load 'works'. "
        "Here the keys carry DataParallel's `module.` prefix, so not one tensor is loaded: the model keeps "
        "the random weights it was built with, and its loss on the batch stays at a random model's "
        "(measured below). Keep `strict=True` (the default), or check what it returns: `missing_keys` and "
        "`unexpected_keys` should be empty, or hold exactly what you meant to skip.",
        "`strict=False` 把键不匹配从报错变成一个返回的列表，于是加载“成功”了。"
        "这里的键带着 DataParallel 的 `module.` 前缀，所以一个张量都没有加载："
        "模型保留着构建时的随机权重，它在这一批上的损失仍然是随机模型的水平（下面实测）。"
        "保持 `strict=True`（默认值），或者检查它的返回值："
        "`missing_keys` 和 `unexpected_keys` 应该为空，或者正好是你有意跳过的那些。",
    ),
    before="model.load_state_dict(state_dict, strict=False)",
    after="model.load_state_dict(state_dict)   # strict: a mismatch raises",
    expect=Outcome(None),
    group="training",
    silent=True,
    bundled_only=True,
    labels=LABELS_STRICT,
    script=Script("train", setup=DP_CHECKPOINT, broken="""
fresh = AutoModelForCausalLM.from_config(model.config)      # a new model, random weights, to load into
state_dict = torch.load(ckpt, map_location="cpu", weights_only=True)
result = fresh.load_state_dict(state_dict, strict=False)    # no error...
print(len(result.missing_keys), "keys missing,", len(result.unexpected_keys), "unexpected")
with torch.no_grad():
    logits = fresh.eval()(input_ids).logits
print("loss:", nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten()).item())
""", fix="""
fresh = AutoModelForCausalLM.from_config(model.config)
state_dict = torch.load(ckpt, map_location="cpu", weights_only=True)
""" + STRIP + """fresh.load_state_dict(state_dict)                           # strict: any mismatch raises
with torch.no_grad():
    logits = fresh.eval()(input_ids).logits
print("loss:", nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten()).item())
"""),
)
def strict_false_hides(lab: Lab, r: BreakResult) -> None:
    input_ids, labels = batch(lab)

    def loss_of(model) -> float:
        with torch.no_grad():
            logits = model.eval()(input_ids).logits
        return round(float(torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())), 3)

    with tempfile.TemporaryDirectory(prefix="breakit-strict-") as folder:
        ckpt = str(Path(folder) / "model.pt")
        torch.save(torch.nn.DataParallel(lab.copy()).state_dict(), ckpt)
        ns = attempt_script(lab, strict_false_hides, r, ckpt=ckpt)
        result = ns.get("result")
        r.measured = {"missing_keys": len(result.missing_keys) if result else None,
                      "unexpected_keys": len(result.unexpected_keys) if result else None,
                      "loss_of_the_trained_model": loss_of(lab.cpu_model()),
                      "loss_after_strict_false_load": loss_of(ns["fresh"]) if "fresh" in ns else None}
        run_fix(lab, strict_false_hides, r, ckpt=ckpt)


SCENARIOS = (optimizer_before_to, optimizer_state_from_gpu, dataparallel_not_moved, dataparallel_prefix,
             strict_false_hides)
