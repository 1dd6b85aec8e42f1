"""The lab's renderers (break-it results, the diagnoser, the inspector), its simulations' labels,
how a real GPU's wording was built, and the verdicts of its timings.
"""

from playground.core.i18n.words import W

PREFIXES = ("ui", "flag", "inspect", "sim", "lab", "gpu", "timing")

TEXT: dict[str, W] = {
    # while it runs, every second: the time left from what the same mistake on the same model took here
    "lab.running_left": W("Running the mistake, then its fix: {elapsed} s so far, about {left} s left "
                          "(its last runs on this model here took {took} s).",
                          "正在运行这个错误，然后运行修复：已用 {elapsed} 秒，大约还剩 {left} 秒"
                          "（它最近几次在这里用这个模型运行用时 {took} 秒）。"),
    "lab.running_over": W("Running the mistake, then its fix: {elapsed} s so far, longer than its last runs on "
                          "this model here ({took} s).",
                          "正在运行这个错误，然后运行修复：已用 {elapsed} 秒，比它最近几次在这里用这个模型运行"
                          "（{took} 秒）更久。"),
    "lab.running_first": W("Running the mistake, then its fix: {elapsed} s so far; no estimate of the time left "
                           "yet: its first run on this model here.",
                           "正在运行这个错误，然后运行修复：已用 {elapsed} 秒；还无法估计剩余时间："
                           "这是它在这里用这个模型的第一次运行。"),
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
    "ui.no_error_wording": W(
        "Nothing raised here: the stand-in for the device accepted what the real device refuses (below, in its own "
        "words). What the stand-in did:",
        "这里没有抛出异常：设备的替身接受了真实设备会拒绝的东西（下面是真实设备自己的措辞）。替身做了什么：",
    ),
    "ui.no_error": W(
        "No exception: this mistake is silent. What it costs, measured here:",
        "没有异常：这个错误是静默的。它的代价，在本机实测：",
    ),
    # a tutorial's worry that measures harmless (scenario 19's order): said as what it is, not as a mistake
    "ui.no_error_harmless": W(
        "No exception, and none is due: this order is harmless here. What it does, measured here:",
        "没有异常，也不该有：这个顺序在这里无害。它做了什么，在本机实测：",
    ),
    "ui.order": W("The two orders", "两种顺序"),
    "ui.before_harmless": W("The order the tutorials warn against", "教程警告的顺序"),
    "ui.after_harmless": W("The tutorials' order", "教程的顺序"),
    "ui.fix_run_harmless": W("The tutorials' order, run for real", "教程的顺序，真实运行"),
    "ui.fix_ok_harmless": W("It runs too", "同样可以运行"),
    "ui.measured": W("Measured", "实测"),
    "ui.warnings": W("Warnings the libraries printed", "库打印的警告"),
    "ui.simulated": W("How it was simulated", "怎样模拟的"),
    "ui.simulated_top": W("Simulated: how, under the library's message.", "模拟运行：怎样模拟的，见库的消息下方。"),
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
    "ui.try_it": W("Reproduce it in the lab: mistake {number} of **Break it**, on the Playground tab.",
                   "在实验室中复现：游乐场页**搞坏它**里的第 {number} 个错误。"),
    "ui.module": W("Module", "模块"),
    "ui.params": W("Parameters", "参数量"),
    "ui.buffers": W("Buffers", "缓冲区"),
    "ui.bytes": W("Bytes", "字节"),
    "ui.tensors_n": W("Tensors", "张量数"),
    "ui.flag": W("Flag", "标记"),
    "ui.summary": W("Summary by (device, dtype)", "按（设备，数据类型）汇总"),
    "ui.modules": W("Every module with its own parameters or buffers", "每个直接拥有参数或缓冲区的模块"),
    "ui.quantized": W(
        "**Quantized weights:** {n} {n?tensor is|tensors are} `{tensor}` (torchao): each says it is a float matrix "
        "(its `dtype` and `shape`) and holds smaller tensors (the first: {layout}). Together {bytes}, where the float "
        "matrices would hold {float_bytes}.",
        "**量化权重**：{n} 个张量是 `{tensor}`（torchao）：每个都自称是浮点矩阵（看它的 `dtype` 和 `shape`），"
        "实际存的是更小的张量（第一个：{layout}）。合计 {bytes}，若是浮点矩阵则为 {float_bytes}。",
    ),
    "ui.flagged": W("Mixed placement: {n} {n?module differs|modules differ} from the rest", "放置不一致：{n} 个模块与其余部分不同"),
    "ui.flagged_none_quantized": W(
        "Every tensor of this model sits on the same device; the quantized weights apart, every float tensor has the "
        "same dtype.",
        "这个模型的所有张量都在同一设备上；除量化权重外，所有浮点张量的数据类型也相同。",
    ),
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
    "flag.planned": W("on {device}, where Accelerate's plan (hf_device_map) put it on {planned}",
                      "在 {device} 上，而 Accelerate 的计划（hf_device_map）把它放在 {planned}"),
    "flag.offloaded_disk": W("offloaded to disk, by design: on `meta`, its values read from the disk for each "
                             "forward pass", "按设计卸载到磁盘：在 `meta` 上，每次前向传播时从磁盘读取它的值"),
    "flag.offloaded_ram": W("offloaded to RAM, by design: on `meta`, its values kept in a CPU state dict and "
                            "copied in for each forward pass", "按设计卸载到内存：在 `meta` 上，它的值保存在 CPU 状态字典里，"
                            "每次前向传播时复制过来"),
    "ui.offloaded": W(
        "Offloaded by Accelerate's plan: {n} {n?module is|modules are} on `meta` by design, {n?its|their} values "
        "kept elsewhere by a hook (marked below).",
        "由 Accelerate 的计划卸载：{n} 个模块按设计位于 `meta`，它们的值由钩子保存在别处（下方已标出）。"),
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
        "On a fake cuda:0 device: this machine has no GPU.",
        "在伪造的 cuda:0 设备上：这台机器没有 GPU。",
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
    "sim.both": W("{how} {differs}", "{how}{differs}"),  # how a run was simulated, then how a real GPU differs
    "lab.apart": W(
        "The broken script ran as written in a Python process of its own, on {device}: there this mistake stops a "
        "CUDA kernel with a device-side assert, and after one every CUDA call in that process fails until it "
        "ends (in the server it would break every later GPU run). What the kernel printed: {kernel}",
        "出错的脚本按原样在单独的 Python 进程里运行，设备是 {device}：在那里这个错误会让 CUDA 内核触发设备端断言"
        "（device-side assert），此后这个进程里的每一次 CUDA 调用都会失败，直到进程结束"
        "（若在服务器进程里运行，之后所有的 GPU 运行都会出错）。内核打印的内容：{kernel}",
    ),
    "lab.apart.timeout": W("The broken script, run in a process of its own, did not finish in {seconds} s and was "
                           "stopped: nothing it raised can be shown.",
                           "在单独进程里运行的出错脚本 {seconds} 秒内没有结束，已被停止：无法显示它抛出的错误。"),
    "lab.apart.no_kernel_line": W("no assert line (the script raised before any kernel ran)",
                                  "没有断言行（脚本在任何内核运行之前就报错了）"),
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
    "gpu.wrapper": W(
        "Built from PyTorch's message template in the installed `{lib}` (its string literals), with the operator "
        "and argument where a real CUDA kernel's device check fails: `{op}`, argument `{arg}`, in the generated "
        "wrapper `{wrapper}` (named as torchgen names it, from this torch's native_functions.yaml).",
        "由已安装的 `{lib}` 中 PyTorch 的消息模板（其中的字符串字面量）构造，"
        "填入真实 CUDA 内核的设备检查失败的位置：算子 `{op}`、参数 `{arg}`，"
        "所在的生成包装函数 `{wrapper}`（按 torchgen 的命名规则，依据这个 torch 自带的 native_functions.yaml）。",
    ),
    "gpu.iterator": W(
        "Built from PyTorch's message template in the installed `{lib}`: `{op}` is a TensorIterator operator "
        "(device_check: NoCheck in native_functions.yaml), so on a GPU it fails in TensorIterator's own "
        "check, worded as the fake tensors word it.",
        "由已安装的 `{lib}` 中 PyTorch 的消息模板构造：`{op}` 是 TensorIterator 算子"
        "（native_functions.yaml 中标为 device_check: NoCheck），"
        "所以在 GPU 上它在 TensorIterator 自己的检查中失败，措辞与伪张量的相同。",
    ),
    "gpu.conv": W(
        "Built from the convolution's message template in the installed `{lib}`, with the tensor types a CPU "
        "float input and a CUDA float weight report.",
        "由已安装的 `{lib}` 中卷积的消息模板构造，填入 CPU 上 float 输入和 CUDA 上 float 权重各自报告的张量类型。",
    ),
    "gpu.refill": W(
        "The same check and template (in the installed `{lib}`) raised it here with {old}; a GPU names {new}.",
        "这里由同一个检查和模板（在已安装的 `{lib}` 中）用 {old} 触发；在 GPU 上它写的是 {new}。",
    ),
    "ui.real_gpu": W("What a real GPU raises, with the installed torch", "真实 GPU 会抛出的消息（已安装的 torch）"),
    "ui.real_gpu_only": W("What the real device raises, in the installed library's own words (nothing here can raise it)",
                          "真实设备会抛出的消息，用已安装库自己的措辞（这里没有任何东西能触发它）"),
    "ui.real_gpu_generate": W("What a GPU host prints, with the installed Transformers",
                              "有 GPU 的机器会打印的内容（已安装的 Transformers）"),
    "ui.scripts": W("The scripts: the mistake and the fix, complete", "脚本：错误写法与修复写法，完整可运行"),
    "ui.scripts.note": W(
        "Each runs as written with `python` from the repository root, on a CPU or a GPU. The fix the lab ran "
        "above is the fix script's own text, in this process, on a private copy of the model.",
        "每个脚本都可以在仓库根目录下用 `python` 原样运行，CPU 或 GPU 均可。"
        "上面实验室运行的修复，就是修复脚本的原文，在本进程中、在模型的私有副本上运行。",
    ),
    "ui.broken_script": W("The mistake (broken script)", "错误写法（出错的脚本）"),
    "ui.fix_script": W("The fix (fixed script)", "修复写法（修复后的脚本）"),
    "ui.broken_script_harmless": W("The order the tutorials warn against (script)", "教程警告的顺序（脚本）"),
    "ui.fix_script_harmless": W("The tutorials' order (script)", "教程的顺序（脚本）"),
    "ui.findings": W("What the measurement says", "实测说明了什么"),
    "ui.broken_output": W("What the broken script printed before", "出错的脚本之前打印的内容"),
    "timing.slower": W(
        "{name} was {median}x slower than {base} here (95% interval of the median {low}-{high}x, {rounds} paired "
        "rounds).",
        "在这里 {name} 比 {base} 慢 {median} 倍（中位数的 95% 区间 {low}-{high} 倍，{rounds} 轮配对）。",
    ),
    "timing.faster": W(
        "{name} was faster than {base} here: {median}x its time, {times}x as fast (95% interval {low}-{high}x, "
        "{rounds} paired rounds).",
        "在这里 {name} 比 {base} 快：用时是它的 {median} 倍，速度是它的 {times} 倍"
        "（95% 区间 {low}-{high} 倍，{rounds} 轮配对）。",
    ),
    "timing.same": W(
        "No clear difference between {name} and {base} on this machine: {low}-{high}x (95% interval of the "
        "median {median}x, {rounds} paired rounds).",
        "在这台机器上 {name} 和 {base} 没有明显差别：{low}-{high} 倍"
        "（中位数 {median} 倍的 95% 区间，{rounds} 轮配对）。",
    ),
    "sim.fake_step": W(
        "This machine has no GPU. The training step up to the failing line ran for real on the CPU; "
        "that line ran on PyTorch's fake tensors, with the tensor a GPU would hold on a fake cuda:0 (a whole "
        "forward pass cannot run on fake cuda tensors in this PyTorch build: slicing one asks for a CUDA "
        "device guard). PyTorch's own device check raised the message above. The fixed step below ran for "
        "real on the CPU.",
        "这台机器没有 GPU。出错行之前的训练步骤在 CPU 上真实运行；"
        "出错的那一行在 PyTorch 的伪张量上运行，本该在 GPU 上的张量放在伪造的 cuda:0 上"
        "（在这个 PyTorch 版本里，完整的前向传播无法在伪 cuda 张量上运行：对它切片需要 CUDA 设备保护）。"
        "上面的消息是 PyTorch 自己的设备检查抛出的。下面修复后的训练步骤在 CPU 上真实运行。",
    ),
    "gpu.step_split": W(
        "The training step up to the failing line ran on the CPU; the failing line ran on {device}, with the "
        "tensors listed below.",
        "出错行之前的训练步骤在 CPU 上运行；出错的那一行在 {device} 上运行，涉及的张量列在下面。",
    ),
    # which copy of a tensor a row of the tensors-involved table shows
    "ui.row.in_file": W("in the file", "文件中"),
    "ui.row.in_model": W("in the model", "模型中"),
    "ui.row.before_move": W("state from a step before the move", "移动之前走一步产生的状态"),
    "ui.row.not_reassigned": W("not reassigned", "没有接收返回值"),
    "ui.row.train_mode": W("train mode", "训练模式"),
    "ui.row.from_autocast": W("from inside autocast", "来自 autocast 内部"),
    "ui.fake_device": W("{device} (fake)", "{device}（模拟）"),  # a tensor of the lab's FakeTensorMode
}
