"""Claims about eval(), losses, optimizers and pinned memory, decided by running them here."""

from __future__ import annotations

import warnings

import torch
from torch.utils.data import DataLoader, TensorDataset

from playground.core.i18n import W
from playground.core.paths import BUNDLED_DIR
from playground.hw import bandwidth
from playground.hw.census import weights_bytes
from playground.lab import target
from playground.lab.factcheck.claim import T2, T3, T4, T5, Evidence, claim
from playground.lab.harness import bundled
from playground.lab.library_text import source_line
from playground.lab.scenarios.silent import saved_for_backward


@claim("eval-saves-memory", f"{T2}，3. eval() 的关键特性", where="scenario:eval-inference-forgotten",
       says=W("eval() saves memory: no gradient information needs to be stored.", "节省内存：不需要存储梯度信息"),
       evidence=W(
           "Live: in eval mode, one forward pass of {tokens} tokens through the bundled model kept {tensors} "
           "tensors, {kib} KiB, for a backward pass (the weights are {weights_mib} MiB); under "
           "torch.inference_mode() it kept {none} bytes. eval() switches dropout (and batch norm) to inference "
           "behaviour and touches no gradient bookkeeping: memory is saved by no_grad()/inference_mode().",
           "实测：在 eval 模式下，内置模型对 {tokens} 个 token 做一次前向传播，为反向传播保留了 {tensors} 个张量，"
           "共 {kib} KiB（权重为 {weights_mib} MiB）；在 torch.inference_mode() 下保留了 {none} 字节。"
           "eval() 只把 dropout（和批归一化）切换到推理行为，不碰梯度记录：省内存靠的是 "
           "no_grad()/inference_mode()。"))
def eval_saves_memory() -> Evidence:
    model, tokenizer = bundled()
    ids = tokenizer("ROMEO: " * 8, return_tensors="pt").input_ids
    assert not model.training  # the shared model is kept in eval mode
    tensors, nbytes = saved_for_backward(model, ids)
    with torch.inference_mode():
        _n, none = saved_for_backward(model, ids)
    return Evidence("false" if nbytes > 0 and none == 0 else "true",
                    dict(tokens=ids.shape[1], tensors=tensors, kib=round(nbytes / 1024, 1), none=none,
                         weights_mib=round(weights_bytes(model) / 2**20, 1)))


@claim("eval-required-before-inference", f"{T2}，3. eval() / 注意", where="scenario:eval-inference-forgotten",
       says=W("model.eval() must be called before inference.", "推理前必须调用 model.eval()"),
       evidence=W(
           "Live: a model from from_pretrained() is already in eval mode (training = {loaded}); one built with "
           "from_config() is in train mode (training = {built}), and so is any model after model.train(). "
           "Calling eval() before inference is right and cheap, but after from_pretrained it changes nothing.",
           "实测：from_pretrained() 得到的模型已经处于 eval 模式（training = {loaded}）；"
           "用 from_config() 构建的模型处于训练模式（training = {built}），调用过 model.train() 的模型也是。"
           "推理前调用 eval() 是对的，代价也小，但在 from_pretrained 之后它什么也不改变。"))
def eval_required() -> Evidence:
    from transformers import AutoModelForCausalLM  # deferred (start-up): catalog.import_model_classes
    loaded = AutoModelForCausalLM.from_pretrained(BUNDLED_DIR, use_safetensors=True)
    built = AutoModelForCausalLM.from_config(loaded.config)
    return Evidence("partly" if not loaded.training and built.training else "true",
                    dict(loaded=loaded.training, built=built.training))


@claim("loss-needs-no-to", f"{T3}，损失函数与优化器的设备陷阱；{T5}，一张表总结", where="scenario:loss-weight-not-moved",
       quote=("损失函数", "自动适配输入设备", "手动移动损失函数对象"),
       says=W("A loss function needs no .to(device): it adapts to its inputs' device.",
              "损失函数不需要 .to(device)：它会自动适配输入所在的设备。"),
       evidence=W(
           "Live: CrossEntropyLoss() holds no tensor (buffers: {plain}), so it needs no .to(); "
           "CrossEntropyLoss(weight=w) keeps w as a buffer ({held}), which stays where it was made until the loss "
           "is moved (loss_fn.to('meta') put it on {moved}). A loss with tensors inside needs .to(device) like a "
           "model (scenario loss-weight-not-moved).",
           "实测：CrossEntropyLoss() 不含张量（缓冲区：{plain}），所以不需要 .to()；"
           "CrossEntropyLoss(weight=w) 把 w 保存为缓冲区（{held}），在损失函数被移动之前它一直留在创建的地方"
           "（loss_fn.to('meta') 把它放到了 {moved}）。内含张量的损失函数和模型一样需要 .to(device)"
           "（场景 loss-weight-not-moved）。"))
def loss_needs_no_to() -> Evidence:
    plain = [n for n, _ in torch.nn.CrossEntropyLoss().named_buffers()]
    weighted = torch.nn.CrossEntropyLoss(weight=torch.ones(3))
    held = [n for n, _ in weighted.named_buffers()]
    moved = str(weighted.to("meta").weight.device)
    return Evidence("partly" if not plain and held else "true", dict(plain=plain or "[]", held=held, moved=moved))


def _kept(move) -> bool:
    """Whether an optimizer made before `model.to(...)` still holds the model's parameters afterwards."""
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.AdamW(model.parameters())
    move(model)
    return all(p is q for p, q in zip(optimizer.param_groups[0]["params"], model.parameters()))


@claim("optimizer-after-to", f"{T4}，2. torch.optim.Adam / ✅ 正确的做法", where="scenario:optimizer-before-to",
       quote="model = model.to(device) # 先移动模型",
       says=W("Move the model first, then create the optimizer.", "先移动模型，再创建优化器。"),
       evidence=W(
           "Live: Module.to() swaps each parameter's data in place, keeping the same nn.Parameter objects, when "
           "the old and new tensors are of compatible kinds ({rule}); dense CPU and CUDA tensors are, so an "
           "optimizer made before model.to('cuda') holds the very tensors the model computes with. Here, an "
           "AdamW made before model.to(torch.float64) (the same in-place path) still held the model's parameters: "
           "{dtype_move}; one made before model.to('meta') (a move that path does not cover) still held them: "
           "{meta_move}. Creating the optimizer after .to() is the safe habit, not a requirement for CPU and GPU.",
           "实测：当新旧张量的类型兼容时（{rule}），Module.to() 就地替换每个参数的数据，"
           "nn.Parameter 对象保持不变；稠密的 CPU 和 CUDA 张量是兼容的，"
           "所以在 model.to('cuda') 之前创建的优化器，持有的正是模型用来计算的张量。"
           "这里，在 model.to(torch.float64)（同一条就地路径）之前创建的 AdamW 仍然持有模型的参数：{dtype_move}；"
           "在 model.to('meta')（这条路径不覆盖的移动）之前创建的是否仍持有：{meta_move}。"
           "在 .to() 之后创建优化器是稳妥的习惯，对 CPU 和 GPU 来说并不是必须的。"))
def optimizer_after_to() -> Evidence:
    dtype_move = _kept(lambda m: m.to(torch.float64))
    meta_move = _kept(lambda m: m.to("meta"))
    rule = source_line(torch.nn.Module._apply, "_has_compatible_shallow_copy_type(")
    return Evidence("partly" if dtype_move and not meta_move else "true",
                    dict(rule=rule, dtype_move=dtype_move, meta_move=meta_move))


@claim("pin-memory-speeds-copies", f"{T3}，数据加载的隐蔽陷阱 / 性能优化技巧", where="scenario:pin-memory-no-gpu",
       says=W("pin_memory=True speeds up the transfer from CPU to GPU.", "pin_memory=True加速CPU到GPU的数据传输"),
       evidence={
           "measured": W(
               "Live, on {device}: a host-to-device copy of {mib} MiB ran at {pinned} GB/s from pinned memory and "
               "{pageable} GB/s from ordinary memory (best of {repeats}, the device synchronised around each). "
               "What DataLoader(pin_memory=True) does here: \"{said}\" (batch pinned: {is_pinned}).",
               "实测，在 {device} 上：从锁页内存做 {mib} MiB 的主机到设备复制，速度 {pinned} GB/s；"
               "从普通内存为 {pageable} GB/s（取 {repeats} 次中最好的一次，每次前后都同步设备）。"
               "DataLoader(pin_memory=True) 在这里的表现：“{said}”（批次已锁页：{is_pinned}）。"),
           "no_gpu": W(
               "Pinned memory speeds up copies from the host to a GPU, and this machine has "
               "none. What DataLoader(pin_memory=True) does here: \"{said}\" (batch pinned: {pinned}). On a GPU "
               "host, time x.to('cuda', non_blocking=True) from pinned and from ordinary memory, synchronised.",
               "锁页内存加速的是从主机到 GPU 的复制，而这台机器没有 GPU。"
               "DataLoader(pin_memory=True) 在这里的表现：“{said}”（批次已锁页：{pinned}）。"
               "在有 GPU 的机器上，同步后分别计时从锁页内存和普通内存执行 x.to('cuda', non_blocking=True)。"),
       })
def pin_memory_speeds() -> Evidence:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batch = next(iter(DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2, pin_memory=True)))[0]
    said = str(caught[0].message) if caught else "(no warning)"
    gpu = target.page()
    if gpu.kind in ("cuda", "cuda2"):  # a real CUDA device to copy to: measured, synchronised
        pinned, pageable = bandwidth.h2d(gpu.device, pinned=True), bandwidth.h2d(gpu.device, pinned=False)
        return Evidence("true" if pinned.gbps > pageable.gbps else "false",
                        dict(device=gpu.device, mib=pinned.bytes // 2**20, pinned=round(pinned.gbps, 2),
                             pageable=round(pageable.gbps, 2), repeats=pinned.repeats, said=said,
                             is_pinned=bool(batch.is_pinned())), sentence="measured")
    return Evidence("not measurable here", dict(said=said, pinned=bool(batch.is_pinned())), live=False,
                    sentence="no_gpu")


# in the order the page lists them
CLAIMS = (
    eval_saves_memory, eval_required, loss_needs_no_to, optimizer_after_to, pin_memory_speeds,
)
