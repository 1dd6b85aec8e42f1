"""Training mistakes around the step: autocast's dtypes, pinned batches, metrics read with NumPy.

The same step as `playground.lab.scenarios.training`, changed in one place. The autocast one raises
live on this CPU (with bfloat16); pinning is measured live (it warns and does nothing without an
accelerator); `.numpy()` on a GPU tensor is raised live on the scenario's target: a GPU, or the meta
device, the one other device here, by the same check and template a GPU meets.
"""

from __future__ import annotations

import torch

from playground.core.i18n import W
from playground.lab import gpu_wording
from playground.lab.capture import attempt
from playground.lab.harness import Lab, attempt_script, mark, row, run_fix, scenario
from playground.lab.library_text import TORCH_LIB
from playground.lab.outcome import Outcome
from playground.lab.result import BreakResult
from playground.lab.scenarios.training import LOSS, STEP, batch, changed, cpu_logits
from playground.lab.scripts import Script

HEAD_OUTSIDE = """
head = nn.Linear(model.config.vocab_size, 2).to(device)     # a small head trained on top: two classes
target = torch.tensor([1], device=device)
with torch.autocast(device_type=device, dtype=torch.bfloat16):
    logits = model(input_ids).logits                         # bfloat16: autocast ran the LM head in bfloat16
{score}
loss = nn.functional.cross_entropy(score, target)
"""
OUTSIDE = "score = head(logits[:, -1])                                 # outside autocast: a float32 layer"
INSIDE = ("with torch.autocast(device_type=device, dtype=torch.bfloat16):\n"
          "    score = head(logits[:, -1])                             # inside: autocast casts for the layer")
LOGITS = "logits = model(input_ids).logits\n"
STEP_NO_LOSS = changed(LOGITS + LOSS + "\n", "", STEP)


@scenario(
    "autocast-outside", 24,
    title=W("Training: an autocast output used by a float32 layer outside autocast",
            "训练：在 autocast 之外，用 float32 的层处理 autocast 的输出"),
    explain=W(
        "`torch.autocast` changes dtypes, not devices: inside it, matrix multiplications run in the lower "
        "precision (here bfloat16, live on this CPU) and return bfloat16 tensors. Outside it, a float32 "
        "layer given such a tensor refuses: a matrix multiplication needs both operands in one dtype. Run "
        "every layer of the forward pass and the loss inside the autocast region (and use "
        "`torch.autocast(device_type=device, ...)`: the tutorials' `torch.cuda.amp.autocast` is deprecated "
        "and, without CUDA, disables itself with a warning).",
        "`torch.autocast` 改变的是数据类型，不是设备：在它里面，矩阵乘法以低精度运行"
        "（这里是 bfloat16，在这台 CPU 上实时运行），返回 bfloat16 张量。"
        "在它外面，一个 float32 的层拿到这样的张量会拒绝：矩阵乘法要求两个操作数的数据类型相同。"
        "把前向传播的每一层和损失都放在 autocast 区域里"
        "（并使用 `torch.autocast(device_type=device, ...)`：教程里的 "
        "`torch.cuda.amp.autocast` 已经弃用，没有 CUDA 时它会发出警告并自行关闭）。",
    ),
    before="with torch.autocast(device_type=device, dtype=torch.bfloat16):\n    logits = model(input_ids).logits\n"
           "score = head(logits[:, -1])",
    after="with torch.autocast(device_type=device, dtype=torch.bfloat16):\n    logits = model(input_ids).logits\n"
          "    score = head(logits[:, -1])",
    # at::native's matmul dtype check, the same on every device (here: live on the CPU)
    expect=Outcome(RuntimeError, r"mat1 and mat2 must have the same dtype.*BFloat16 and Float"),
    group="training",
    bundled_only=True,
    script=Script("train", broken=changed("loss.backward()", HEAD_OUTSIDE.format(score=OUTSIDE).strip("\n")
                                          + "\nloss.backward()", STEP_NO_LOSS),
                  fix=changed("loss.backward()", HEAD_OUTSIDE.format(score=INSIDE).strip("\n")
                              + "\nloss.backward()", STEP_NO_LOSS)),
)
def autocast_outside(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, autocast_outside, r)
    if "logits" in ns and "head" in ns:
        r.tensors = [row("logits", ns["logits"], "ui.row.from_autocast"), row("head.weight", ns["head"].weight)]
    run_fix(lab, autocast_outside, r)


PINNED = """
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(input_ids.repeat(8, 1), labels.repeat(8, 1)), batch_size=4,
                    {pin})
for batch_ids, batch_labels in loader:
    input_ids = batch_ids.to(device, non_blocking=True)     # asynchronous only from pinned memory, to a GPU
    labels = batch_labels.to(device, non_blocking=True)
print("batch pinned:", batch_ids.is_pinned())
"""
PIN_ALWAYS = "pin_memory=True)                        # pinned memory needs a GPU (an accelerator) to exist"
PIN_IF_GPU = "pin_memory=torch.cuda.is_available())   # pin only when there is a GPU to copy to"
LABELS_PIN = {
    "warnings": W("warnings printed by DataLoader", "DataLoader 打印的警告数"),
    "batch_pinned": W("the batch is in pinned memory", "批次在锁页内存中"),
    "accelerator_here": W("an accelerator on this machine", "这台机器上有加速器"),
}


@scenario(
    "pin-memory-no-gpu", 25,
    title=W("Training: pin_memory=True and non_blocking on a machine without a GPU",
            "训练：在没有 GPU 的机器上使用 pin_memory=True 和 non_blocking"),
    explain=W(
        "Pinned (page-locked) host memory lets a GPU copy a batch by DMA while the CPU goes on, which is "
        "what `non_blocking=True` needs to be asynchronous; from ordinary memory the copy is synchronous "
        "anyway. Without an accelerator there is nothing to pin for: `DataLoader(pin_memory=True)` prints "
        "a warning and hands out ordinary batches (measured below), and `non_blocking=True` to the CPU is "
        "an ordinary copy. Nothing breaks, and nothing is gained. Pin only when a GPU is there: "
        "`pin_memory=torch.cuda.is_available()`.",
        "锁页（pinned）的主机内存让 GPU 能通过 DMA 复制批次，同时 CPU 继续工作，"
        "这正是 `non_blocking=True` 实现异步所需要的；从普通内存复制本来就是同步的。"
        "没有加速器时就没有可锁页的对象：`DataLoader(pin_memory=True)` 打印一条警告，"
        "交出的是普通批次（下面实测），`non_blocking=True` 复制到 CPU 也只是普通复制。"
        "什么也没坏，也什么都没得到。只在有 GPU 时锁页：`pin_memory=torch.cuda.is_available()`。",
    ),
    before="DataLoader(dataset, batch_size=4, pin_memory=True)",
    after="DataLoader(dataset, batch_size=4, pin_memory=torch.cuda.is_available())",
    expect=Outcome(None),
    group="training",
    silent=True,
    bundled_only=True,
    labels=LABELS_PIN,
    script=Script("train", broken=changed(
        "input_ids, labels = input_ids.to(device), labels.to(device)\n", PINNED.format(pin=PIN_ALWAYS).lstrip("\n"),
        STEP), fix=changed("input_ids, labels = input_ids.to(device), labels.to(device)\n",
                           PINNED.format(pin=PIN_IF_GPU).lstrip("\n"), STEP)),
)
def pin_memory_no_gpu(lab: Lab, r: BreakResult) -> None:
    ns = attempt_script(lab, pin_memory_no_gpu, r)
    pinned = ns.get("batch_ids")
    r.measured = {"warnings": len(r.warnings),
                  "batch_pinned": bool(pinned.is_pinned()) if pinned is not None else None,
                  "accelerator_here": torch.accelerator.is_available()}
    run_fix(lab, pin_memory_no_gpu, r)


METRIC = ("accuracy = (logits[:, :-1].argmax(-1) == labels[:, 1:]).float().mean(){read}\n"
          'print(f"one training step on {{device}}: loss {{loss.item():.3f}}, accuracy {{accuracy:.3f}}")')
NUMPY = ".numpy()   # NumPy reads host memory only"
ITEM = ".item()     # a Python number: copied from the device"


def accuracy(predictions, targets):
    return (predictions == targets).float().mean().numpy()


@scenario(
    "numpy-on-gpu", 26,
    title=W("Training: a metric read with .numpy() from a GPU tensor", "训练：用 .numpy() 读取 GPU 张量上的指标"),
    explain=W(
        "NumPy arrays live in host memory, so `Tensor.numpy()` shares the tensor's memory only on the CPU "
        "and refuses a tensor on any other device, naming it. The check is the same for every device: here "
        "it is raised live on the meta device; on a GPU it names `cuda:0` (shown beside it, from the same "
        "template in the library). Read a number with `.item()`, or copy first: `.cpu().numpy()` (and "
        "`.detach()` when the tensor requires grad).",
        "NumPy 数组存放在主机内存里，所以 `Tensor.numpy()` 只在 CPU 上与张量共享内存，"
        "对其他任何设备上的张量都会拒绝，并写出那个设备。这个检查对所有设备都一样："
        "这里用 meta 设备实时触发；在 GPU 上它写的是 `cuda:0`（旁边给出，来自库里同一个模板）。"
        "读一个数用 `.item()`，否则先复制：`.cpu().numpy()`（张量需要梯度时再加 `.detach()`）。",
    ),
    before="accuracy = (predictions == labels).float().mean().numpy()",
    after="accuracy = (predictions == labels).float().mean().item()",
    needs_gpu=True,
    stand_in="meta",
    # Tensor.numpy()'s check names the device (torch/csrc/utils/tensor_numpy.cpp, in libtorch_python.so)
    expect={"simulated": Outcome(TypeError, r"can't convert meta device type tensor to numpy"),
            "cuda": Outcome(TypeError, r"can't convert cuda:\d+ device type tensor to numpy"),
            "mps": Outcome(TypeError, r"can't convert mps(:\d+)? device type tensor to numpy")},
    group="training",
    bundled_only=True,
    script=Script("train", broken=changed(
        'print(f"one training step on {device}: loss {loss.item():.3f}")', METRIC.format(read=NUMPY)),
        fix=changed('print(f"one training step on {device}: loss {loss.item():.3f}")', METRIC.format(read=ITEM))),
    words={
        "simulation": W(
            "With the meta device: this machine has no GPU, and meta is a real second device. The "
            "predictions were computed for real on the CPU, then placed on meta, where .numpy() meets the same "
            "check a GPU tensor meets.",
            "用 meta 设备：这台机器没有 GPU，而 meta 是一个真实存在的第二种设备。"
            "预测值先在 CPU 上真实计算，再放到 meta 上，.numpy() 在那里遇到与 GPU 张量相同的检查。",
        ),
    },
)
def numpy_on_gpu(lab: Lab, r: BreakResult) -> None:
    input_ids, labels = batch(lab)
    logits = cpu_logits(lab, lab.copy(), input_ids)
    predictions = lab.run.place(logits[:, :-1].argmax(-1))  # on the GPU (meta standing in: a real second device)
    targets = lab.run.place(labels[:, 1:])
    r.tensors = [row("predictions", predictions), row("labels", targets)]
    with lab.run.running():
        attempt(r, lambda: accuracy(predictions, targets))
    mark(lab, r, "scenario.numpy-on-gpu.simulation", "", note="gpu.step_split")
    built = gpu_wording.refill(r.error_message or "", "meta", "cuda:0",
                               " device type tensor to numpy. Use Tensor.cpu() to ",
                               TORCH_LIB / "libtorch_python.so") if r.simulated and r.raised else None
    if built:
        r.real_gpu_message, r.real_gpu_how = built
    run_fix(lab, numpy_on_gpu, r)


SCENARIOS = (autocast_outside, pin_memory_no_gpu, numpy_on_gpu)
