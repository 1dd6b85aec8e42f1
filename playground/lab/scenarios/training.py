"""Training-step mistakes: one optimisation step on the bundled model, changed in one place.

The step (STEP below, and every script of this family) is the tutorials' training loop on a
batch of Shakespeare: move the model, train mode, AdamW, move the batch, forward, the loss,
backward, step. Each scenario changes exactly one line of it. The fix is the step as it should
be, run here for real (on the CPU: a real forward, loss, backward and AdamW step).

Where only a GPU raises the mistake, the lab runs the steps before the failing line for real on
the CPU, and the failing line itself on the scenario's device target, with the tensors that would
be on the GPU placed there: a real GPU, or PyTorch's fake tensors on a fake `cuda:0` (a whole forward
pass cannot run on fake cuda tensors in this PyTorch build: slicing one asks for a CUDA device
guard). The same code both ways; PyTorch's own device check raises, and beside a simulated result
the page shows the sentence a real GPU raises there.
"""

from __future__ import annotations

import torch

from playground.core.i18n import W
from playground.lab.capture import attempt
from playground.lab.harness import (Lab, bundled, expect_device_error, greedy, mark, row, run_fix, scenario)
from playground.lab.outcome import GPU_MEETS_CPU, Outcome, same_device
from playground.lab.result import BreakResult
from playground.lab.scenarios.devices import real_gpu
from playground.lab.scripts import Script, data

MOVE = "input_ids, labels = input_ids.to(device), labels.to(device)"
LOSS = "loss = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())"
STEP = f"""
model = model.to(device)
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
{MOVE}
logits = model(input_ids).logits
{LOSS}
loss.backward()
optimizer.step()
optimizer.zero_grad()
print(f"one training step on {{device}}: loss {{loss.item():.3f}}")
"""


def changed(old: str, new: str, step: str = STEP) -> str:
    """The step with exactly one place changed (an error here if `old` is not in it exactly once)."""
    if step.count(old) != 1:
        raise ValueError(f"{old!r} must occur once in the step")
    return step.replace(old, new)


def batch(lab: Lab) -> tuple[torch.Tensor, torch.Tensor]:
    """The scripts' batch, made by the scripts' own DATA lines."""
    ns = data("train", lab.tokenizer)
    return ns["input_ids"], ns["labels"]


def cpu_logits(lab: Lab, model, input_ids) -> torch.Tensor:
    """The forward pass of the step, for real on the CPU (train mode, as in the step)."""
    with torch.no_grad():
        return model.train()(input_ids).logits


# The failing lines, as functions, so that the frame where the error surfaces reads as the step's code.
def cross_entropy(logits, labels, loss_fn=torch.nn.functional.cross_entropy):
    return loss_fn(logits, labels)


def weigh(losses, weights):
    return (losses * weights).sum() / weights.sum()


def add_bias(logits, bias):
    return logits + bias


def failing_line(lab: Lab, r: BreakResult, fn, tensors: dict[str, torch.Tensor], key: str = "sim.fake_step") -> None:
    """Run one failing line of the step on the target: the tensors named "gpu:..." placed there (a GPU,
    or fake tensors on a fake cuda:0), the others as the step left them, on the CPU."""
    args = {name.removeprefix("gpu:"): lab.run.place(t) if name.startswith("gpu:") else t
            for name, t in tensors.items()}
    mark(lab, r, key, "", note="gpu.step_split")
    r.tensors = [row(name, t) for name, t in args.items()]
    with lab.run.running():
        attempt(r, lambda: fn(*args.values()))
    expect_device_error(lab, r)


@scenario(
    "labels-on-cpu", 13,
    title=W("Training: the labels left on the CPU", "训练：标签留在了 CPU 上"),
    explain=W(
        "The step moved the model and the inputs but not the labels. The forward pass runs on the GPU; the "
        "loss then meets GPU logits and CPU labels and refuses (on a GPU, in the cross-entropy's "
        "`nll_loss_forward`, naming its `target`). Every tensor that meets the model's output must be moved "
        "with the batch: `input_ids, labels = input_ids.to(device), labels.to(device)`.",
        "这一步移动了模型和输入，却没有移动标签。前向传播在 GPU 上运行；"
        "随后损失函数遇到 GPU 上的 logits 和 CPU 上的标签，拒绝计算"
        "（在 GPU 上，是交叉熵的 `nll_loss_forward` 报错，点名它的 `target`）。"
        "凡是要和模型输出一起计算的张量，都要随批次一起移动："
        "`input_ids, labels = input_ids.to(device), labels.to(device)`。",
    ),
    before="input_ids = input_ids.to(device)\nlogits = model(input_ids).logits\nloss = loss_fn(logits, labels)",
    after="input_ids, labels = input_ids.to(device), labels.to(device)\nlogits = model(input_ids).logits\n"
          "loss = loss_fn(logits, labels)",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="training",
    bundled_only=True,
    script=Script("train", broken=changed(MOVE, "input_ids = input_ids.to(device)   # the labels stay on the CPU"),
                  fix=STEP),
)
def labels_on_cpu(lab: Lab, r: BreakResult) -> None:
    input_ids, labels = batch(lab)
    logits = cpu_logits(lab, lab.copy(), input_ids)
    failing_line(lab, r, cross_entropy, {"gpu:logits[:, :-1].flatten(0, 1)": logits[:, :-1].flatten(0, 1),
                                     "labels[:, 1:].flatten()": labels[:, 1:].flatten()})
    real_gpu(r, "nll_loss_forward", "target", "cpu", lab.run.target.device)
    run_fix(lab, labels_on_cpu, r)


WEIGHTED = """
class WeightedLoss(nn.Module):
    \"\"\"Cross-entropy that weighs later positions more: they have more context to predict from.\"\"\"

    def forward(self, logits, labels):
        losses = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
        weights = torch.linspace(0.5, 1.0, losses.numel(){device})
        return (losses * weights).sum() / weights.sum()
"""


@scenario(
    "tensor-in-forward", 14,
    title=W("Training: a tensor created inside forward() without device=", "训练：在 forward() 里创建张量时没写 device="),
    explain=W(
        "A new tensor (`torch.zeros`, `torch.arange`, `torch.linspace`, `torch.tensor`...) is created on "
        "the default device, the CPU, whatever the device of the tensors around it, and `model.to()` "
        "never sees it: it does not exist until forward runs. Here a loss module builds its position "
        "weights in forward; on a GPU the multiplication meets GPU losses and CPU weights. Create it "
        "where its neighbours are: `device=losses.device` (and `dtype=` when it matters).",
        "新张量（`torch.zeros`、`torch.arange`、`torch.linspace`、`torch.tensor`……）"
        "总是创建在默认设备 CPU 上，不管周围的张量在哪里；`model.to()` 也看不到它："
        "它要到 forward 运行时才存在。这里一个损失模块在 forward 里生成位置权重；"
        "在 GPU 上，乘法遇到 GPU 上的损失和 CPU 上的权重。"
        "在它的邻居所在的地方创建它：`device=losses.device`（需要时还有 `dtype=`）。",
    ),
    before="weights = torch.linspace(0.5, 1.0, n)",
    after="weights = torch.linspace(0.5, 1.0, n, device=losses.device)",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="training",
    bundled_only=True,
    script=Script("train", helpers="", broken=WEIGHTED.format(device="") + changed(
        LOSS, "loss = WeightedLoss()(logits[:, :-1], labels[:, 1:])"),
        fix=WEIGHTED.format(device=", device=losses.device") + changed(
            LOSS, "loss = WeightedLoss()(logits[:, :-1], labels[:, 1:])")),
)
def tensor_in_forward(lab: Lab, r: BreakResult) -> None:
    input_ids, labels = batch(lab)
    logits = cpu_logits(lab, lab.copy(), input_ids)
    losses = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(),
                                               reduction="none")
    failing_line(lab, r, weigh, {"gpu:losses": losses, "weights = torch.linspace(0.5, 1.0, n)":
                                 torch.linspace(0.5, 1.0, losses.numel())})
    real_gpu(r, "mul.Tensor", "other", "cpu", lab.run.target.device)
    run_fix(lab, tensor_in_forward, r)


BIASED = """
class NoEndOfText(nn.Module):
    \"\"\"The language model with a fixed logit bias: the end-of-text token is never predicted.\"\"\"

    def __init__(self, lm, eos_id):
        super().__init__()
        self.lm = lm
        bias = torch.zeros(lm.config.vocab_size)
        bias[eos_id] = -1e4
        {keep}

    def forward(self, input_ids):
        return self.lm(input_ids).logits + self.bias
"""
PLAIN = "self.bias = bias                               # a plain attribute: .to() does not know it"
BUFFER = 'self.register_buffer("bias", bias, persistent=False)   # moved by .to(); not saved (rebuilt here)'
WRAPPED = changed("logits = model(input_ids).logits", "logits = model(input_ids)",
                  changed("model = model.to(device)",
                          "model = NoEndOfText(model, tokenizer.eos_token_id).to(device)"))


def _moved_to_meta(keep_as_buffer: bool, persistent: bool = False) -> tuple[str, bool]:
    """Live, on this CPU: where `.to("meta")` leaves the bias, and whether state_dict() saves it."""
    m = torch.nn.Module()
    bias = torch.zeros(4)
    if keep_as_buffer:
        m.register_buffer("bias", bias, persistent=persistent)
    else:
        m.bias = bias
    m.to("meta")
    return str(m.bias.device), "bias" in m.state_dict()


LABELS_UNREG = {
    "plain_attribute_after_to_meta": W("a plain tensor attribute, after module.to('meta')",
                                       "普通张量属性，在 module.to('meta') 之后"),
    "buffer_after_to_meta": W("a registered buffer, after module.to('meta')", "注册的缓冲区，在 module.to('meta') 之后"),
    "plain_attribute_in_state_dict": W("the plain attribute in state_dict()", "普通属性在 state_dict() 里"),
    "buffer_persistent_false_in_state_dict": W("a buffer with persistent=False in state_dict()",
                                               "persistent=False 的缓冲区在 state_dict() 里"),
    "buffer_persistent_true_in_state_dict": W("a buffer with persistent=True in state_dict()",
                                              "persistent=True 的缓冲区在 state_dict() 里"),
}


@scenario(
    "unregistered-tensor", 15,
    title=W("Training: a tensor kept as a plain attribute, which .to() skips",
            "训练：张量存成普通属性，.to() 会跳过它"),
    explain=W(
        "`Module.to()` moves what the module has registered: its parameters (`nn.Parameter`) and buffers "
        "(`register_buffer`), recursively. A tensor stored as a plain attribute (`self.bias = tensor`) is "
        "neither, so it stays where it was made, on the CPU (measured below on this machine, with the meta "
        "device as the other device). Register it: `self.register_buffer('bias', bias)`. Add "
        "`persistent=False` when it should not be saved in `state_dict()`, as here, where the constructor "
        "rebuilds it.",
        "`Module.to()` 移动的是模块登记过的东西：参数（`nn.Parameter`）"
        "和缓冲区（`register_buffer`），并递归到子模块。作为普通属性保存的张量（`self.bias = tensor`）"
        "两者都不是，所以它留在创建它的地方：CPU（下面在这台机器上用 meta 设备作为另一台设备实测）。"
        "把它注册成缓冲区：`self.register_buffer('bias', bias)`。"
        "如果它不该保存进 `state_dict()`，加上 `persistent=False`，比如这里：构造函数会重新生成它。",
    ),
    before="self.bias = bias",
    after='self.register_buffer("bias", bias, persistent=False)',
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="training",
    bundled_only=True,
    labels=LABELS_UNREG,
    script=Script("train", broken=BIASED.format(keep=PLAIN) + WRAPPED, fix=BIASED.format(keep=BUFFER) + WRAPPED),
)
def unregistered_tensor(lab: Lab, r: BreakResult) -> None:
    (plain_dev, plain_saved), (buf_dev, buf_saved) = _moved_to_meta(False), _moved_to_meta(True)
    r.measured = {"plain_attribute_after_to_meta": plain_dev, "buffer_after_to_meta": buf_dev,
                  "plain_attribute_in_state_dict": plain_saved,
                  "buffer_persistent_false_in_state_dict": buf_saved,
                  "buffer_persistent_true_in_state_dict": _moved_to_meta(True, persistent=True)[1]}
    input_ids, _labels = batch(lab)
    logits = cpu_logits(lab, lab.copy(), input_ids)
    bias = torch.zeros(logits.shape[-1])
    failing_line(lab, r, add_bias, {"gpu:self.lm(input_ids).logits": logits, "self.bias": bias})
    real_gpu(r, "add.Tensor", "other", "cpu", lab.run.target.device)
    run_fix(lab, unregistered_tensor, r)


LABELS_TO = {
    "tensor_to_returns_same_object": W("tensor.to(torch.float64) returns the same tensor",
                                       "tensor.to(torch.float64) 返回同一个张量"),
    "tensor_dtype_after_unassigned_to": W("the tensor's dtype after an unassigned .to(torch.float64)",
                                          "没有赋值的 .to(torch.float64) 之后，张量的数据类型"),
    "module_to_returns_same_object": W("module.to(torch.float64) returns the same module",
                                       "module.to(torch.float64) 返回同一个模块"),
    "module_dtype_after_unassigned_to": W("the module's dtype after an unassigned .to(torch.float64)",
                                          "没有赋值的 .to(torch.float64) 之后，模块的数据类型"),
}


@scenario(
    "to-not-reassigned", 16,
    title=W("Training: x.to(device) without assigning the result", "训练：调用 x.to(device) 却没有接收返回值"),
    explain=W(
        "`Tensor.to()` returns a new tensor and leaves the original where it was; `Module.to()` moves the "
        "module's tensors in place and returns the module itself. So `model.to(device)` alone works, and "
        "`input_ids.to(device)` alone does nothing: the moved copy is dropped. Measured below on this "
        "machine with a dtype change (the CPU has no second device to move to). Always write "
        "`x = x.to(device)`.",
        "`Tensor.to()` 返回一个新张量，原来的张量留在原地；`Module.to()` "
        "就地移动模块的张量，并返回模块本身。所以单独写 `model.to(device)` 有效，"
        "单独写 `input_ids.to(device)` 什么也没做：移动后的副本被丢掉了。"
        "下面在这台机器上用数据类型转换实测（CPU 没有第二台设备可移动）。"
        "始终写成 `x = x.to(device)`。",
    ),
    before="input_ids.to(device), labels.to(device)",
    after="input_ids, labels = input_ids.to(device), labels.to(device)",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="training",
    bundled_only=True,
    labels=LABELS_TO,
    script=Script("train", broken=changed(
        MOVE, "input_ids.to(device), labels.to(device)   # each returns a moved copy, and the copies are dropped"),
        fix=STEP),
)
def to_not_reassigned(lab: Lab, r: BreakResult) -> None:
    t = torch.ones(2)
    m = torch.nn.Linear(2, 2)
    r.measured = {"tensor_to_returns_same_object": t.to(torch.float64) is t,
                  "tensor_dtype_after_unassigned_to": str(t.dtype).removeprefix("torch."),
                  "module_to_returns_same_object": m.to(torch.float64) is m,
                  "module_dtype_after_unassigned_to": str(m.weight.dtype).removeprefix("torch.")}
    input_ids, _labels = batch(lab)
    model = lab.run.place(bundled()[0])  # the model did move (Module.to works in place)
    mark(lab, r, "sim.fake_cuda", "")
    r.tensors = [row("input_ids", input_ids, "ui.row.not_reassigned"),
                 row("transformer.wte.weight", model.get_input_embeddings().weight)]
    with lab.run.running():
        attempt(r, lambda: greedy(model, input_ids, steps=1))
    expect_device_error(lab, r)
    real_gpu(r, "index_select", "index", "cpu", lab.run.target.device)
    run_fix(lab, to_not_reassigned, r)


CLASS_WEIGHTS = """
counts = torch.bincount(labels.flatten(), minlength=model.config.vocab_size).float()
{loss_fn}
"""
LOSS_FN_PLAIN = ("loss_fn = nn.CrossEntropyLoss(weight=1.0 / (counts + 1.0))   # rarer tokens weigh more;"
                 " the weight is made on the CPU")
LOSS_FN_MOVED = ("loss_fn = nn.CrossEntropyLoss(weight=1.0 / (counts + 1.0)).to(device)   # the loss holds a tensor:"
                 " move it")
LABELS_LOSS = {
    "buffers_of_CrossEntropyLoss()": W("buffers of CrossEntropyLoss()", "CrossEntropyLoss() 的缓冲区"),
    "buffers_of_CrossEntropyLoss(weight=w)": W("buffers of CrossEntropyLoss(weight=w)",
                                               "CrossEntropyLoss(weight=w) 的缓冲区"),
    "weight_after_loss_fn.to('meta')": W("its weight after loss_fn.to('meta')", "loss_fn.to('meta') 之后它的 weight"),
}


@scenario(
    "loss-weight-not-moved", 17,
    title=W("Training: a weighted loss whose class weights were never moved",
            "训练：带类别权重的损失函数，权重从没移动"),
    explain=W(
        "The tutorials say a loss function needs no `.to(device)`. That holds for a loss that holds no "
        "tensor: `CrossEntropyLoss()` has no buffers. `CrossEntropyLoss(weight=w)` keeps `w` as a buffer "
        "(listed below, measured), so on a GPU the loss meets GPU logits and its own CPU weights. A loss is "
        "an `nn.Module`: `loss_fn.to(device)` moves its buffers, as it moves a model's.",
        "教程说损失函数不需要 `.to(device)`。这只对不含张量的损失函数成立："
        "`CrossEntropyLoss()` 没有缓冲区。`CrossEntropyLoss(weight=w)` 把 `w` 保存为缓冲区"
        "（下面实测列出），所以在 GPU 上，损失函数会遇到 GPU 上的 logits 和它自己在 CPU 上的权重。"
        "损失函数也是 `nn.Module`：`loss_fn.to(device)` 会移动它的缓冲区，就像移动模型的一样。",
    ),
    before="loss_fn = nn.CrossEntropyLoss(weight=w)",
    after="loss_fn = nn.CrossEntropyLoss(weight=w).to(device)",
    needs_gpu=True,
    expect=GPU_MEETS_CPU,
    group="training",
    bundled_only=True,
    labels=LABELS_LOSS,
    script=Script("train", broken=CLASS_WEIGHTS.format(loss_fn=LOSS_FN_PLAIN) + changed(
        LOSS, "loss = loss_fn(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())"),
        fix=CLASS_WEIGHTS.format(loss_fn=LOSS_FN_MOVED) + changed(
            LOSS, "loss = loss_fn(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten())")),
)
def loss_weight_not_moved(lab: Lab, r: BreakResult) -> None:
    weighted = torch.nn.CrossEntropyLoss(weight=torch.ones(3))
    r.measured = {"buffers_of_CrossEntropyLoss()": [n for n, _ in torch.nn.CrossEntropyLoss().named_buffers()],
                  "buffers_of_CrossEntropyLoss(weight=w)": [n for n, _ in weighted.named_buffers()],
                  "weight_after_loss_fn.to('meta')": str(weighted.to("meta").weight.device)}
    input_ids, labels = batch(lab)
    logits = cpu_logits(lab, lab.copy(), input_ids)
    counts = torch.bincount(labels.flatten(), minlength=logits.shape[-1]).float()
    loss_fn = torch.nn.CrossEntropyLoss(weight=1.0 / (counts + 1.0))
    failing_line(lab, r, lambda lg, lb: cross_entropy(lg, lb, loss_fn),
                 {"gpu:logits[:, :-1].flatten(0, 1)": logits[:, :-1].flatten(0, 1),
                  "gpu:labels[:, 1:].flatten()": labels[:, 1:].flatten()})
    r.tensors.append(row("loss_fn.weight", loss_fn.weight))
    real_gpu(r, "nll_loss_forward", "weight", "cpu", lab.run.target.device)
    run_fix(lab, loss_weight_not_moved, r)


def forward(model, input_ids):
    return model(input_ids).logits


def cuda_call_here() -> str:
    """What `tensor.cuda()` does on this machine, live: the device it lands on, or what it raises."""
    try:
        return str(torch.ones(1).cuda().device)
    except Exception as e:  # a PyTorch without CUDA, or no GPU visible: its own exception
        return f"{type(e).__name__}: {e}"


LABELS_CUDA = {"cuda_call_here": W("what tensor.cuda() does on this machine (live)",
                                   "在这台机器上 tensor.cuda() 的结果（实测）")}


@scenario(
    "cuda-mixed-to", 18,
    title=W("Training: .cuda() mixed into device-agnostic code", "训练：在与设备无关的代码里混用 .cuda()"),
    explain=W(
        "The script chooses `device` from what is available, then one line calls `.cuda()` anyway. Where "
        "PyTorch has no CUDA, that line raises at once (what it does on this machine is measured below). On a "
        "machine with several GPUs it silently picks the current GPU (`cuda:0`), which may not be `device` "
        "(say `cuda:1`): the model's first operator then meets its weights on cuda:1 and the inputs on "
        "cuda:0, and raises the device mismatch shown above (simulated with two fake GPUs where the machine "
        "has fewer than two). Use `.to(device)` everywhere, once the device is chosen.",
        "脚本根据可用情况选好了 `device`，可有一行还是调用了 `.cuda()`。"
        "在没有 CUDA 的 PyTorch 上，这一行立刻报错（这台机器上的结果见下面的实测）。"
        "在有多块 GPU 的机器上，它会默默选用当前 GPU（`cuda:0`），"
        "而它不一定是 `device`（比如 `cuda:1`）：于是模型的第一个算子遇到 cuda:1 上的权重和 cuda:0 上的输入，"
        "报出上面的设备不匹配（机器上的 GPU 少于两块时，用两块伪 GPU 模拟）。"
        "选定设备之后，处处使用 `.to(device)`。",
    ),
    before="input_ids, labels = input_ids.cuda(), labels.cuda()",
    after="input_ids, labels = input_ids.to(device), labels.to(device)",
    needs_gpu=True,
    devices=2,  # the mistake shows only where `device` is not the current GPU: cuda:1 against cuda:0
    real_on=("cuda",),
    # the embedding meets weights on cuda:1 and ids on cuda:0: FakeTensor's wording, or (two real GPUs) the
    # CUDA index_select wrapper's, built by gpu_wording.same_device("index_select", "index", "cuda:0", "cuda:1")
    expect={"simulated": Outcome(RuntimeError, same_device("cuda:1", "cuda:0")),
            "cuda2": Outcome(RuntimeError, same_device(r"cuda:\d+", "cuda:0"))},
    group="training",
    bundled_only=True,
    labels=LABELS_CUDA,
    script=Script("train", broken=changed(MOVE, "input_ids, labels = input_ids.cuda(), labels.cuda()"), fix=STEP),
    words={
        "simulation": W(
            "With two fake GPUs: this machine has fewer than two CUDA devices. The batch was made for real "
            "on the CPU; the forward pass ran on PyTorch's fake tensors, with the model on a fake cuda:1 (`device`) "
            "and the input ids where `.cuda()` puts them, on the current GPU, a fake cuda:0. PyTorch's own device "
            "check raised the message above; a real pair of GPUs words it as shown below. What `.cuda()` does on "
            "this machine is measured below. The fixed step ran for real, on this machine's `device`.",
            "用两块伪 GPU：这台机器的 CUDA 设备少于两块。批次在 CPU 上真实生成；"
            "前向传播在 PyTorch 的伪张量上运行，模型在伪造的 cuda:1（`device`）上，"
            "输入 id 在 `.cuda()` 放置它们的地方，即当前 GPU，伪造的 cuda:0。"
            "上面的消息是 PyTorch 自己的设备检查抛出的；真实的两块 GPU 的措辞见下面。"
            "`.cuda()` 在这台机器上的结果见下面的实测。修复后的训练步骤在这台机器的 `device` 上真实运行。",
        ),
    },
)
def cuda_mixed_to(lab: Lab, r: BreakResult) -> None:
    r.measured = {"cuda_call_here": cuda_call_here()}
    input_ids, _labels = batch(lab)
    model = lab.run.place(bundled()[0])  # model.to(device): device is cuda:1
    ids = lab.run.place(input_ids, device="cuda:0")  # what .cuda() picks: the current GPU, cuda:0 unless set
    mark(lab, r, "scenario.cuda-mixed-to.simulation", "", note="gpu.step_split")
    r.tensors = [row("input_ids (.cuda())", ids), row("transformer.wte.weight (.to(device))",
                                                      model.get_input_embeddings().weight)]
    with lab.run.running():
        attempt(r, lambda: forward(model, ids))
    expect_device_error(lab, r)
    real_gpu(r, "index_select", "index", "cuda:0", lab.run.target.device)
    run_fix(lab, cuda_mixed_to, r)


SCENARIOS = (labels_on_cpu, tensor_in_forward, unregistered_tensor, to_not_reassigned, loss_weight_not_moved,
             cuda_mixed_to)
