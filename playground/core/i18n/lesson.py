"""The words of the whole lesson: real-GPU wording, timings' verdicts, training simulations, the fact-check."""

from playground.core.i18n.words import W

TEXT: dict[str, W] = {
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
    "gpu.template": W(
        "The warning's template in the installed Transformers (`{source}`), filled in as a GPU host fills it: "
        "input_ids on cuda, the model on cpu.",
        "已安装的 Transformers 中这条警告的模板（`{source}`），按有 GPU 的机器的情况填入：input_ids 在 cuda，模型在 cpu。",
    ),
    "ui.real_gpu": W("What a real GPU raises, with the installed torch", "真实 GPU 会抛出的消息（已安装的 torch）"),
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
        "Simulated: this machine has no GPU. The training step up to the failing line ran for real on the CPU; "
        "that line ran on PyTorch's fake tensors, with the tensor a GPU would hold on a fake cuda:0 (a whole "
        "forward pass cannot run on fake cuda tensors in this PyTorch build: slicing one asks for a CUDA "
        "device guard). PyTorch's own device check raised the message above. The fixed step below ran for "
        "real on the CPU.",
        "模拟：这台机器没有 GPU。出错行之前的训练步骤在 CPU 上真实运行；"
        "出错的那一行在 PyTorch 的伪张量上运行，本该在 GPU 上的张量放在伪造的 cuda:0 上"
        "（在这个 PyTorch 版本里，完整的前向传播无法在伪 cuda 张量上运行：对它切片需要 CUDA 设备保护）。"
        "上面的消息是 PyTorch 自己的设备检查抛出的。下面修复后的训练步骤在 CPU 上真实运行。",
    ),
    "sim.two_gpus": W(
        "Simulated with two fake GPUs: this machine has fewer than two CUDA devices. The batch was made for real "
        "on the CPU; the forward pass ran on PyTorch's fake tensors, with the model on a fake cuda:1 (`device`) "
        "and the input ids where `.cuda()` puts them, on the current GPU, a fake cuda:0. PyTorch's own device "
        "check raised the message above; a real pair of GPUs words it as shown below. What `.cuda()` does on "
        "this machine is measured below. The fixed step ran for real, on this machine's `device`.",
        "用两块伪 GPU 模拟：这台机器的 CUDA 设备少于两块。批次在 CPU 上真实生成；"
        "前向传播在 PyTorch 的伪张量上运行，模型在伪造的 cuda:1（`device`）上，"
        "输入 id 在 `.cuda()` 放置它们的地方，即当前 GPU，伪造的 cuda:0。"
        "上面的消息是 PyTorch 自己的设备检查抛出的；真实的两块 GPU 的措辞见下面。"
        "`.cuda()` 在这台机器上的结果见下面的实测。修复后的训练步骤在这台机器的 `device` 上真实运行。",
    ),
    "gpu.step_split": W(
        "The training step up to the failing line ran on the CPU; the failing line ran on {device}, with the "
        "tensors listed below.",
        "出错行之前的训练步骤在 CPU 上运行；出错的那一行在 {device} 上运行，涉及的张量列在下面。",
    ),
    "sim.data_parallel": W(
        "Simulated: this machine has no GPU, so nn.DataParallel's constructor makes a pass-through wrapper "
        "(device_ids=[]). The lab set its attributes as the constructor sets them on a host with one GPU "
        "(device_ids=[0], source device cuda:0); the forward that raised above is DataParallel's own, "
        "unchanged. The fixed step below ran for real on the CPU.",
        "模拟：这台机器没有 GPU，所以 nn.DataParallel 的构造函数只生成一个直通包装（device_ids=[]）。"
        "实验室按有一块 GPU 的机器上构造函数的做法设置了它的属性（device_ids=[0]，源设备 cuda:0）；"
        "上面抛出错误的 forward 是 DataParallel 自己的，未作改动。下面修复后的训练步骤在 CPU 上真实运行。",
    ),
    "sim.meta_numpy": W(
        "Simulated with the meta device: this machine has no GPU, and meta is a real second device. The "
        "predictions were computed for real on the CPU, then placed on meta, where .numpy() meets the same "
        "check a GPU tensor meets.",
        "用 meta 设备模拟：这台机器没有 GPU，而 meta 是一个真实存在的第二种设备。"
        "预测值先在 CPU 上真实计算，再放到 meta 上，.numpy() 在那里遇到与 GPU 张量相同的检查。",
    ),
    "sim.generate_check": W(
        "Simulated with the meta device: this machine has no GPU, and generate() cannot run on fake tensors "
        "(it reads token values to decide when to stop). Transformers' own generate() ran with input_ids on "
        "meta, a real second device type that holds shapes but no data, so its device-type check fired and "
        "printed the warning above, live (it names meta where a GPU host names cuda: see beside). The run was "
        "stopped at that check, because meta tensors hold no tokens to generate from; the special token ids "
        "were unset on a shallow copy of the model so that it reached the check first. Run as a file on a GPU "
        "host, the broken script prints the warning, then generation succeeds.",
        "用 meta 设备模拟：这台机器没有 GPU，而 generate() 不能在伪张量上运行（它要读取 token 的值来决定何时停止）。"
        "Transformers 自己的 generate() 以放在 meta 上的 input_ids 运行；meta 是真实的第二种设备类型，"
        "只有形状没有数据，所以它的设备类型检查触发，实时打印了上面的警告"
        "（这里写的是 meta，有 GPU 的机器上写的是 cuda：见旁边）。运行在这个检查处被停下，"
        "因为 meta 张量里没有可供生成的 token；我们在模型的浅拷贝上取消了特殊 token 的 id，"
        "让它先到达这个检查。在有 GPU 的机器上把出错的脚本作为文件运行，会先打印警告，然后生成成功。",
    ),
    "sim.generate_stopped": W("Stopped at the check: {frame}", "在检查处停下：{frame}"),
    "fact.verdict.true": W("true", "正确"),
    "fact.verdict.false": W("false", "错误"),
    "fact.verdict.partly": W("partly true", "部分正确"),
    "fact.verdict.not_measurable_here": W("not measurable here", "这里无法测量"),
    "fact.claim": W("Claim (as the tutorial says it)", "说法（教程原文）"),
    "fact.claim_en": W("In English", "英文"),
    "fact.source": W("Source", "出处"),
    "fact.evidence": W("Evidence", "证据"),
    "fact.verdict": W("Verdict", "结论"),
    "fact.live_col": W("Run here, now", "此刻在这里运行"),
    "fact.live": W("produced live in this process, {seconds} s", "在本进程中实时得出，{seconds} 秒"),
    "fact.not_live": W("not measurable here; what a GPU would show", "这里无法测量；在 GPU 上会看到什么"),
    "fact.summary": W(
        "Claims checked: {n}, quoted from the five tutorials; {live} decided live on this machine: {false} false, "
        "{partly} partly true, {true} true, {unmeasured} not measurable here.",
        "已核查五篇教程中的 {n} 条说法，{live} 条在这台机器上实时判定：{false} 条错误，{partly} 条部分正确，"
        "{true} 条正确，{unmeasured} 条这里无法测量。",
    ),
    "page.tab.factcheck": W("Fact-check", "事实核查"),
    "page.factcheck.intro": W(
        "### The tutorials, checked\nEach claim is quoted from the Chinese tutorials this playground grew from, "
        "and decided by an experiment that runs here when you press a button: the verdict follows what it finds. "
        "Claims only a GPU can decide say what a GPU would show.",
        "### 核查教程\n每条说法都引自本游乐场所依据的中文教程，按下按钮时在这里运行实验来判定："
        "结论由实验结果决定。只有 GPU 才能判定的说法，会说明在 GPU 上会看到什么。",
    ),
    "page.factcheck.pick": W("Claim", "说法"),
    "page.factcheck.one": W("Check this claim", "核查这条说法"),
    "page.factcheck.all": W("Check all claims", "核查全部说法"),
    "page.factcheck.running": W("Running the experiments…", "正在运行实验……"),
}
