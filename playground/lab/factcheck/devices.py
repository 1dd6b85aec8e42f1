"""Claims about devices: what `.to()` does and checks, what a checkpoint records, what raises what.

Each check runs its experiment on this machine now; where a GPU is needed, the meta device (a real
second device that holds no data) stands in for it, and the evidence says so.
"""

from __future__ import annotations

import pickletools
import re
import tempfile
import zipfile
from pathlib import Path

import torch

from playground.core.i18n import W
from playground.lab.factcheck.claim import T1, T3, T5, Evidence, claim, listed
from playground.lab.harness import bundled
from playground.lab.library_text import generate_device_lines
from playground.lab.scenarios.checkpoints import save_tagged


def _locations(path: str) -> list[str]:
    """The device each storage of a saved file was recorded on (read without restoring anything)."""
    seen: list[str] = []
    torch.load(path, map_location=lambda storage, location: seen.append(location) or storage, weights_only=True)
    return seen


@claim("state-dict-keeps-no-device", f"{T3}，检查点保存与加载的陷阱", where="scenario:cuda-checkpoint",
       quote=("torch.save(state_dict)", "不保留设备", "需预先配置目标设备"),
       says=W("torch.save(state_dict) keeps no device information.", "torch.save(state_dict) 不保留设备信息。"),
       evidence=W(
           "Live: torch.save recorded a device for each of the {n} storages of the bundled model's state_dict "
           "({here}). Saved as a GPU machine saves it, every storage is recorded as {gpu}, and torch.load without "
           "map_location then fails here: \"{error}\". A state_dict keeps no module structure, but it does keep "
           "devices; map_location rewrites them when loading.",
           "实测：torch.save 为内置模型 state_dict 的全部 {n} 个存储都记录了设备（{here}）。"
           "按 GPU 机器的方式保存时，每个存储都记录为 {gpu}，不带 map_location 的 torch.load 在这里就会失败："
           "“{error}”。state_dict 不保存模块结构，但确实保存设备；加载时由 map_location 改写。"))
def state_dict_keeps_device() -> Evidence:
    model = bundled()[0]
    with tempfile.TemporaryDirectory(prefix="factcheck-") as folder:
        here, gpu = str(Path(folder) / "here.pt"), str(Path(folder) / "gpu.pt")
        torch.save(model.state_dict(), here)
        save_tagged(model.state_dict(), gpu, "cuda:0")  # as torch.save records it on a GPU machine
        recorded, recorded_gpu = _locations(here), _locations(gpu)
        try:
            torch.load(gpu, weights_only=True)
            error = "(none)"
        except RuntimeError as e:
            error = str(e).split(". ")[0]
    kept = bool(recorded) and all(recorded)
    return Evidence("false" if kept else "true", dict(n=len(recorded), here=listed(sorted(set(recorded))),
                                                      gpu=listed(sorted(set(recorded_gpu))), error=error))


def _recorded_devices(path: str) -> list[str]:
    """The devices a torch.save file records for its storages, read from the pickle's opcodes: nothing is
    unpickled (each storage is saved as a persistent id ('storage', type, key, location, numel))."""
    with zipfile.ZipFile(path) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    found, after_storage = [], False
    for op, arg, _pos in pickletools.genops(data):
        if isinstance(arg, str):
            if arg == "storage":
                after_storage = True
            elif after_storage and re.fullmatch(r"(cpu|cuda|mps|xpu|meta|hpu)(:\d+)?", arg):
                found.append(arg)
                after_storage = False
    return found


@claim("whole-model-keeps-device", f"{T3}，检查点保存与加载的陷阱", where="scenario:cuda-checkpoint",
       quote=("torch.save(model)", "保留设备", "可能强制加载到原设备"),
       says=W("torch.save(model) keeps the device and may force loading onto it.",
              "torch.save(model) 会保留设备，加载时可能被强制放回原来的设备。"),
       evidence=W(
           "Live: a whole pickled model records its storages' devices too ({where}, read from the file without "
           "unpickling it), so loading it elsewhere needs map_location like a state_dict. Since PyTorch 2.6 "
           "torch.load also refuses to unpickle a module by default (weights_only=True): \"{refused}\". Loading it "
           "means weights_only=False, which runs code from the file: save and share state_dicts instead.",
           "实测：整个被 pickle 的模型同样记录了存储所在的设备（{where}，不反序列化、直接从文件中读出），"
           "所以在别处加载它和 state_dict 一样需要 map_location。从 PyTorch 2.6 起，torch.load 默认还会拒绝反序列化模块"
           "（weights_only=True）：“{refused}”。要加载它就得用 weights_only=False，"
           "这会执行文件里的代码：应当保存和分享 state_dict。"))
def whole_model_keeps_device() -> Evidence:
    model = torch.nn.Linear(4, 4)
    with tempfile.TemporaryDirectory(prefix="factcheck-") as folder:
        path = str(Path(folder) / "model.pt")
        torch.save(model, path)
        recorded = sorted(set(_recorded_devices(path)))
        try:
            torch.load(path, weights_only=True)
            refused = "(loaded)"
        except Exception as e:  # PyTorch >= 2.6 refuses to unpickle a module with weights_only=True
            first = re.sub(r"\x1b\[[0-9;]*m", "", str(e).splitlines()[0])  # without the terminal's bold
            refused = f"{type(e).__name__}: {first[:120]}"
    return Evidence("true" if recorded else "false", dict(where=listed(recorded), refused=refused))


@claim("to-verifies-parameters", f"{T1}，后台发生了什么 / 步骤 4：设备验证", where="scenario:unregistered-tensor",
       says=W("After migrating, PyTorch verifies that every parameter is on the target device.",
              "迁移完成后，PyTorch 会验证所有参数都在目标设备上"),
       evidence=W(
           "Live: a module holding a plain tensor attribute was moved with .to('meta'). It returned without any "
           "error, leaving the module's tensors on {places}: .to() moves what is registered (parameters and "
           "buffers) and checks nothing afterwards. A mismatch surfaces later, when an operator meets two devices.",
           "实测：把一个带有普通张量属性的模块用 .to('meta') 移动。它没有任何报错就返回了，"
           "模块的张量却分布在 {places}：.to() 只移动登记过的东西（参数和缓冲区），事后什么也不检查。"
           "不一致要到之后某个算子遇到两个设备时才会暴露。"))
def to_verifies() -> Evidence:
    m = torch.nn.Linear(2, 2)
    m.scale = torch.ones(2)  # a plain attribute: not a parameter, not a buffer
    m.to("meta")  # returns without any error
    places = sorted({str(m.weight.device), str(m.scale.device)})
    return Evidence("false" if len(places) > 1 else "true", dict(places=listed(places)))


@claim("gpu-model-cpu-inputs-raise", f"{T1}，快速回答 / 场景 2：模型在 GPU，输入在 CPU", where="scenario:inputs-on-cpu",
       says=W("If the model is on the GPU and the inputs on the CPU, it raises too (generate(), with \"Input type "
              "(torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same\").",
              "如果模型在 GPU 而输入在 CPU：同样会报错"),
       evidence=W(
           "Read from the installed Transformers now: generate() warns only when the inputs are not on the CPU "
           "({warns}), and moves the forward's inputs to the model's device before each step ({moves}). So "
           "generate() with CPU inputs and a GPU model succeeds, without a warning; a direct model(input_ids) "
           "call moves nothing and raises (scenario inputs-on-cpu). The message the tutorial quotes, \"Input type "
           "(torch.FloatTensor) and weight type (torch.cuda.FloatTensor)\", comes from convolutions: the bundled "
           "GPT-2 has {convs} torch convolution modules.",
           "从已安装的 Transformers 中读到：generate() 只在输入不在 CPU 上时才警告（{warns}），"
           "并在每一步之前把前向传播的输入移到模型所在设备（{moves}）。所以输入在 CPU、模型在 GPU 时，"
           "generate() 会成功，连警告都没有；直接调用 model(input_ids) 不移动任何东西，会报错"
           "（场景 inputs-on-cpu）。教程引用的 “Input type (torch.FloatTensor) and weight type "
           "(torch.cuda.FloatTensor)” 来自卷积：内置的 GPT-2 中 torch 卷积模块的个数为 {convs}。"))
def cpu_inputs_raise() -> Evidence:
    lines = generate_device_lines()
    warns, moves = lines["warns_when"], lines["moves_inputs"]
    convs = sum(isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d)) for m in bundled()[0].modules())
    verdict = "partly" if moves and "!= \"cpu\"" in warns else "true"
    return Evidence(verdict, dict(warns=warns, moves=moves, convs=convs))


@claim("device-side-assert-is-device-index", f"{T3}，常见错误模式速查表", where="panel:diagnose",
       quote=("CUDA error: device-side assert triggered", "设备索引越界", "检查cuda:0等设备号"),
       says=W("\"CUDA error: device-side assert triggered\" means a device index out of range: check cuda:0 and "
              "the like.", "“CUDA error: device-side assert triggered” 表示设备索引越界：应检查 cuda:0 等设备号。"),
       evidence=W(
           "Live: a token id of {vocab} (the vocabulary has {vocab} entries, 0 to {last}) sent to the bundled "
           "model's embedding on the CPU raises \"{raised}\". On a GPU the same bound is checked inside the "
           "kernel (`srcIndex < srcSelectDimSize`), which can only report it as \"device-side assert triggered\", "
           "late. It means an index out of range (a token id, a label), not a bad device number: a wrong device "
           "index fails when the tensor is moved, with \"invalid device ordinal\". Rerun on the CPU to see it.",
           "实测：把 token id {vocab}（词表有 {vocab} 项，0 到 {last}）送进内置模型在 CPU 上的词嵌入，"
           "抛出 “{raised}”。在 GPU 上，同样的边界在内核里检查（`srcIndex < srcSelectDimSize`），"
           "它只能晚些报告为 “device-side assert triggered”。它的意思是索引越界（token id、标签），"
           "不是设备号错了：设备号错误会在移动张量时失败，报 “invalid device ordinal”。在 CPU 上重跑就能看到。"))
def device_side_assert() -> Evidence:
    emb = bundled()[0].get_input_embeddings()
    vocab = emb.num_embeddings
    try:
        emb(torch.tensor([[vocab]]))
        raised = "(no error)"
    except IndexError as e:
        raised = f"IndexError: {e}"
    return Evidence("false" if raised.startswith("IndexError") else "true",
                    dict(vocab=vocab, last=vocab - 1, raised=raised))


@claim("dataparallel-move-before-wrap", f"{T3}，多GPU训练的特殊处理", where="scenario:dataparallel-not-moved",
       quote="model = nn.DataParallel(model) # 包装前先移动到device",
       says=W("Move the model to the device before wrapping it in DataParallel.",
              "用 DataParallel 包装模型之前，要先把它移到设备上。"),
       evidence=W(
           "Live: nn.DataParallel(model).to('meta') leaves the inner model's parameters on {a}; "
           "nn.DataParallel(model.to('meta')) on {b}. The order does not matter (DataParallel is a module, and "
           ".to() reaches the one inside), and the tutorial's own code wraps first. Moving is required: "
           "DataParallel checks that the parameters are on device_ids[0] (scenario dataparallel-not-moved).",
           "实测：nn.DataParallel(model).to('meta') 之后内部模型的参数在 {a}；"
           "nn.DataParallel(model.to('meta')) 之后在 {b}。顺序无关紧要（DataParallel 本身也是模块，"
           ".to() 会到达里面的模型），教程自己的代码也是先包装。移动是必须的："
           "DataParallel 会检查参数在 device_ids[0] 上（场景 dataparallel-not-moved）。"))
def data_parallel_order() -> Evidence:
    wrap_then_move = next(torch.nn.DataParallel(torch.nn.Linear(2, 2)).to("meta").parameters()).device
    move_then_wrap = next(torch.nn.DataParallel(torch.nn.Linear(2, 2).to("meta")).parameters()).device
    same = wrap_then_move == move_then_wrap
    return Evidence("partly" if same else "true", dict(a=str(wrap_then_move), b=str(move_then_wrap)))


@claim("autocast-handles-devices", f"{T3}，混合精度训练中的设备问题", where="scenario:autocast-outside",
       quote="outputs = model(inputs) # 自动处理设备与精度",
       says=W("Under autocast, device and precision are handled automatically.", "在 autocast 下，设备和精度都会被自动处理。"),
       evidence=W(
           "Live, inside torch.autocast('cpu', dtype=torch.bfloat16): a float32 Linear layer's output came out "
           "in {dtype} (autocast chose the dtype), and the same layer given an input on another device (meta) "
           "raised \"{raised}\". Autocast handles precision, not devices: move the inputs yourself.",
           "实测，在 torch.autocast('cpu', dtype=torch.bfloat16) 里：一个 float32 线性层的输出是 {dtype}"
           "（数据类型由 autocast 选择），而同一层接收另一台设备（meta）上的输入时抛出 “{raised}”。"
           "autocast 处理的是精度，不是设备：输入得自己移动。"))
def autocast_devices() -> Evidence:
    layer = torch.nn.Linear(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        dtype = layer(torch.ones(1, 4)).dtype
        try:
            layer(torch.ones(1, 4, device="meta"))
            raised = "(no error)"
        except RuntimeError as e:
            raised = f"RuntimeError: {e}"
    return Evidence("false" if raised.startswith("RuntimeError") else "true",
                    dict(dtype=str(dtype).removeprefix("torch."), raised=raised))


@claim("cpu-to-is-noop", f"{T1}，设备选择逻辑", where="panel:report",
       says=W("Without a GPU (DEVICE = \"cpu\") the model simply stays on the CPU.",
              "如果没有 GPU：DEVICE = \"cpu\"，模型保持在 CPU"),
       evidence=W(
           "Live: model.to('cpu') on the bundled model (already on the CPU) returned the same object ({same}) and "
           "every parameter kept its memory address ({unchanged}): nothing was copied.",
           "实测：对内置模型（已经在 CPU 上）调用 model.to('cpu')，返回的是同一个对象（{same}），"
           "每个参数的内存地址都没变（{unchanged}）：什么也没有复制。"))
def cpu_move_is_noop() -> Evidence:
    model = bundled()[0]
    before = [p.data_ptr() for p in model.parameters()]
    same = model.to("cpu") is model
    unchanged = before == [p.data_ptr() for p in model.parameters()]
    return Evidence("true" if same and unchanged else "false", dict(same=same, unchanged=unchanged))


@claim("new-tensors-default-to-cpu", f"{T5}，4️⃣ 自定义张量时", where="scenario:tensor-in-forward",
       says=W("A tensor created by hand is on the CPU by default.", "手动创建的 tensor 默认在 CPU，和 GPU 模型计算时报错"),
       evidence=W(
           "Live: torch.tensor([1, 2, 3]) was created on {made}, this process's default device ({default}), "
           "whatever device the model is on. (torch.set_default_device changes the default; nothing else does.)",
           "实测：torch.tensor([1, 2, 3]) 创建在 {made} 上，即本进程的默认设备（{default}），"
           "不管模型在哪个设备上。（只有 torch.set_default_device 会改变默认设备。）"))
def new_tensors_on_cpu() -> Evidence:
    made = torch.tensor([1, 2, 3]).device
    default = torch.get_default_device()
    return Evidence("true" if made.type == "cpu" else "false", dict(made=str(made), default=str(default)))


# in the order the page lists them
CLAIMS = (
    state_dict_keeps_device, whole_model_keeps_device, to_verifies, cpu_inputs_raise, device_side_assert,
    data_parallel_order, autocast_devices, cpu_move_is_noop, new_tensors_on_cpu,
)
