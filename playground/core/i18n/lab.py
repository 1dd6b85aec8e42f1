"""The lab's renderers (break-it results, the diagnoser, the inspector) and the simulation labels."""

from playground.core.i18n.words import W

TEXT: dict[str, W] = {
    "ui.error": W("Error", "错误"),
    "ui.where": W("Where it surfaced in our pipeline", "在我们的流程中出错的位置"),
    "ui.raised_in": W("Raised inside", "抛出位置"),
    "ui.tensors": W("Tensors involved", "涉及的张量"),
    "ui.name": W("Name", "名称"),
    "ui.device": W("Device", "设备"),
    "ui.dtype": W("Dtype", "数据类型"),
    "ui.shape": W("Shape", "形状"),
    "ui.what": W("What happened", "发生了什么"),
    "ui.fix": W("The fix", "修复方法"),
    "ui.before": W("Before (the mistake)", "修复前（错误写法）"),
    "ui.after": W("After (the fix)", "修复后"),
    "ui.fix_run": W("The fixed pipeline, run for real", "修复后的流程，真实运行"),
    "ui.fix_ok": W("The fix works", "修复有效"),
    "ui.fix_failed": W("The fix did not work here", "修复在这里没有成功"),
    "ui.no_error": W(
        "No exception: this mistake is silent. What it costs, measured here:",
        "没有异常：这个错误是静默的。它的代价，在本机实测：",
    ),
    "ui.measured": W("Measured", "实测"),
    "ui.warnings": W("Warnings the libraries printed", "库打印的警告"),
    "ui.simulated": W("Simulated", "模拟"),
    "ui.real": W("Run for real on {device}.", "在 {device} 上真实运行。"),
    "ui.cannot_run": W("Cannot run here", "无法在这里运行"),
    "ui.output": W("Output", "输出"),
    "ui.seconds": W("{seconds:.3f} s", "{seconds:.3f} 秒"),
    "ui.tokens": W("{n} new tokens in {seconds:.3f} s", "{n} 个新 token，用时 {seconds:.3f} 秒"),
    "ui.quantity": W("Quantity", "指标"),
    "ui.value": W("Value", "数值"),
    "ui.not_recognised": W(
        "Not recognised: none of the lab's mistakes matches this text. Paste the last lines of the traceback "
        "(the exception type and its message).",
        "无法识别：这段文字与实验室中的任何错误都不匹配。请粘贴 traceback 的最后几行（异常类型和它的消息）。",
    ),
    "ui.matches": W("Matching mistakes, best first", "匹配的错误（按相关度排序）"),
    "ui.matched_text": W("Matched line", "匹配到的行"),
    "ui.try_it": W("Reproduce it in the lab: scenario `{id}`.", "在实验室中复现：场景 `{id}`。"),
    "ui.module": W("Module", "模块"),
    "ui.params": W("Parameters", "参数量"),
    "ui.buffers": W("Buffers", "缓冲区"),
    "ui.bytes": W("Bytes", "字节"),
    "ui.tensors_n": W("Tensors", "张量数"),
    "ui.flag": W("Flag", "标记"),
    "ui.summary": W("Summary by (device, dtype)", "按（设备，数据类型）汇总"),
    "ui.modules": W("Every module with its own parameters or buffers", "每个直接拥有参数或缓冲区的模块"),
    "ui.flagged": W("Mixed placement: {n} module(s) differ from the rest", "放置不一致：{n} 个模块与其余部分不同"),
    "ui.flagged_none": W(
        "Every tensor of this model sits on the same device with the same dtype.",
        "这个模型的所有张量都在同一设备上，数据类型也相同。",
    ),
    "ui.counts": W("Counting the model's tensors four ways", "用四种方式数模型的张量"),
    "ui.count_api": W("Call", "调用"),
    "ui.count_n": W("Count", "数量"),
    "ui.device_map": W("hf_device_map (where Accelerate placed each module)", "hf_device_map（Accelerate 把每个模块放在哪里）"),
    "ui.fake_note": W(
        "Fake tensors: shapes, dtypes and devices without data (no memory used).",
        "伪张量（fake tensor）：只有形状、数据类型和设备，没有数据（不占内存）。",
    ),
    "ui.rows_cut": W("{shown} of {total} rows shown.", "显示 {shown} / {total} 行。"),
    "flag.device": W("on {device}, while most of the model is on {majority}", "在 {device} 上，而模型的大部分在 {majority} 上"),
    "flag.dtype": W("in {dtype}, while most of the model is in {majority}", "是 {dtype}，而模型的大部分是 {majority}"),
    "flag.mixed": W("its own tensors are on several devices: {devices}", "它自己的张量分布在多个设备上：{devices}"),
    "inspect.counts_note": W(
        "state_dict() lists every name, so a tied weight appears twice (GPT-2's lm_head.weight and "
        "transformer.wte.weight are one tensor). parameters() and named_parameters() yield each tensor once, "
        "under its first name. buffers() are tensors that are saved and moved with the model but are not "
        "trained (some, like rotary frequencies, are not saved: they are non-persistent).",
        "state_dict() 列出每个名字，所以绑定（tied）"
        "的权重会出现两次（GPT-2 的 lm_head.weight 和 transformer.wte.weight"
        " 是同一个张量）。parameters() 和 named_parameters() 每个张量只给一次，"
        "用它的第一个名字。buffers() 是随模型保存和移动、但不参与训练的张量（有些，比如旋转位置编码的频率，"
        "不会被保存：它们是非持久的）。",
    ),
    "inspect.tied": W("Tied (one tensor, several names): {names}", "绑定（一个张量，多个名字）：{names}"),
    "sim.fake_cuda": W(
        "Simulated on a fake cuda:0 device: this machine has no GPU.",
        "在伪造的 cuda:0 设备上模拟：这台机器没有 GPU。",
    ),
    "sim.fake_cuda_differs": W(
        "PyTorch's fake tensors carry a device, a dtype and a shape but no data, and PyTorch's own device "
        "check raised the message above, in the wording of its TensorIterator. A real GPU often fails "
        "earlier, in the device check of the operator's CUDA kernel, and words it differently: its message "
        "is shown below. The fixed run below happens on the CPU.",
        "PyTorch 的伪张量（fake tensor）带有设备、数据类型和形状，但没有数据；"
        "上面的消息是 PyTorch 自己的设备检查以 TensorIterator 的措辞抛出的。"
        "真实 GPU 往往更早失败，在算子的 CUDA 内核的设备检查里，措辞也不同：它的消息显示在下面。"
        "下面修复后的流程在 CPU 上运行。",
    ),
    "sim.conv_dtype": W(
        "Simulated: this machine has no GPU, and PyTorch's fake tensors skip the convolution's type check. "
        "That check compares the input's and the weight's whole tensor type, device and dtype together, so "
        "here the weight stays float32 and the input is bfloat16: the same check fires with its own message. "
        "On a GPU the parenthesis names the CPU and CUDA types (a CPU float tensor and a cuda float tensor) "
        "instead of two CPU dtypes. The fixed run below happens on the CPU.",
        "模拟：这台机器没有 GPU，而 PyTorch 的伪张量会跳过卷积的类型检查。"
        "这个检查把输入和权重的完整张量类型（设备和数据类型一起）做比较，所以这里权重保持 float32、"
        "输入是 bfloat16：同一个检查用它自己的消息报错。在 GPU 上，"
        "括号里写的是 CPU 类型和 CUDA 类型（CPU 的 float 张量与 cuda 的 float 张量），"
        "而不是两种 CPU 数据类型。下面修复后的流程在 CPU 上运行。",
    ),
    "sim.big_model": W(
        "The loaded model is too large to copy for this scenario ({size}); it ran on the bundled model.",
        "已加载的模型太大，这个场景无法复制它（{size}）；改用内置模型运行。",
    ),
    "sim.cannot_run": W(
        "The simulation stopped before PyTorch's device check: fake tensors on this PyTorch build could not run "
        "this model's code ({error_type} in {raised_in}: {message}). On a GPU host this scenario runs for real.",
        "模拟在 PyTorch 的设备检查之前就停下了：这个 PyTorch 版本的伪张量无法运行这个模型的代码"
        "（{raised_in} 中的 {error_type}：{message}）。在有 GPU 的机器上，这个场景会真实运行。",
    ),
}
