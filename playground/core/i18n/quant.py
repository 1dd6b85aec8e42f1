"""The quantized dtypes (int8, int4 through torchao): what a load quantized and skipped, and what it cost."""

from playground.core.i18n.words import W

PREFIXES = ("quant",)

TEXT: dict[str, W] = {
    "quant.missing": W("int8 and int4 need torchao, which is not installed here ({error}): pip install torchao==0.18.0",
                       "int8 和 int4 需要 torchao，这里没有安装（{error}）：pip install torchao==0.18.0"),
    "quant.phase": W(
        "{n} of {of} weight matrices quantized to {dtype} ({tensor}); the weights went from {before} to {after}; "
        "{copied} of float tensors still mapped from the checkpoint copied into RAM, so that its pages can go",
        "{of} 个权重矩阵中有 {n} 个量化成了 {dtype}（{tensor}）；权重从 {before} 变成 {after}；"
        "仍映射自检查点的 {copied} 浮点张量被复制进内存，好让检查点的页面可以释放",
    ),
    "quant.reason": W(
        "loaded in {base}, then {n} weight matrices ({params} weights) quantized to {dtype} ({tensor}): the weights "
        "went from {before} to {after}, scales and zero points included; skipped: {skipped}",
        "先以 {base} 加载，再把 {n} 个权重矩阵（{params} 个权重）量化成 {dtype}（{tensor}）："
        "权重从 {before} 变成 {after}（含缩放因子和零点）；跳过的：{skipped}",
    ),
    "quant.reason_none": W(
        "loaded in {base}; nothing could be quantized to {dtype}, so it is the {base} model, byte for byte: {skipped}",
        "以 {base} 加载；没有一层能量化成 {dtype}，所以它和 {base} 模型逐字节相同：{skipped}",
    ),
    "quant.sep": W("{a}; {b}", "{a}；{b}"),
    "quant.skip.none": W("none", "无"),
    "quant.skip.embedding": W("{n} {n?embedding|embeddings} ({kinds}: a lookup, not a matrix product)",
                              "{n} 个词嵌入（{kinds}：查表，不是矩阵乘法）"),
    "quant.skip.tied": W("{n} output head tied to the embedding (`{first}`: quantizing it would add a quantized copy "
                         "beside the float one, more bytes, not fewer)",
                         "{n} 个与词嵌入共享权重的输出头（`{first}`：量化它会在浮点副本旁再多出一份量化副本，字节只增不减）"),
    "quant.skip.not_linear": W("{n} {kinds} {n?layer|layers}, not nn.Linear (torchao's quantize_ swaps nn.Linear weights only; "
                               "GPT-2's Conv1D stores its weight [in, out] and multiplies with addmm)",
                               "{n} 个 {kinds} 层，不是 nn.Linear（torchao 的 quantize_ 只替换 nn.Linear 的权重；"
                               "GPT-2 的 Conv1D 以 [in, out] 存储权重，用 addmm 相乘）"),
    "quant.skip.group": W("{n} {n?layer|layers} whose inputs are not a multiple of the group size (first: `{first}`)",
                          "{n} 个输入维度不是分组大小整数倍的层（第一个：`{first}`）"),
    "quant.refused_intro": W(
        "int4 runs here as torchao's IntxWeightOnlyConfig, a 4-bit value held in each byte: no smaller than int8. "
        "torchao's packed int4 (two values per byte, Int4WeightOnlyConfig) was tried on this machine just now, "
        "each packing format on a small layer, and refused, each in its own words:",
        "这里的 int4 用的是 torchao 的 IntxWeightOnlyConfig，每个字节只存一个 4 位数值：并不比 int8 小。"
        "torchao 的打包 int4（每字节两个数值，Int4WeightOnlyConfig）刚才在这台机器上逐个打包格式在一个小层上试过，"
        "都被拒绝了，下面是各自的原话：",
    ),
    "quant.refused": W("`{format}` refused: {error}", "`{format}` 被拒绝：{error}"),
    "quant.err.straight": W(
        "{dtype} is made after loading (torchao quantizes the float32 model): no checkpoint holds {dtype} weights to "
        "load straight onto a device. Compare the two paths in float32, float16 or bfloat16.",
        "{dtype} 是加载之后才生成的（torchao 量化 float32 模型）：没有检查点存着 {dtype} 权重可以直接加载到设备上。"
        "请用 float32、float16 或 bfloat16 比较这两条路径。",
    ),
    "quant.err.placement": W(
        "{dtype} weights cannot be placed with memory limits: Accelerate's offload hooks bring each weight in with "
        "`.to()` before its layer runs, and torchao's quantized tensors refuse it under inference_mode, as a "
        "generation runs. Nothing quantized can be offloaded here: load {dtype} without limits (its weights are "
        "smaller), or place float32, float16 or bfloat16. What the hooks met on a small {dtype} layer just now: {error}",
        "{dtype} 权重不能按内存上限放置：Accelerate 的卸载钩子在每层运行前用 `.to()` 把权重搬进来，"
        "而在 inference_mode 下（生成时就是这样运行的）torchao 的量化张量拒绝这样做。"
        "这里任何量化过的东西都不能卸载：请不带上限加载 {dtype}（它的权重更小），或者放置 float32、float16 或 bfloat16。"
        "刚才钩子在一个小的 {dtype} 层上遇到的是：{error}",
    ),
    "quant.err.placement_ran": W(
        "{dtype} weights cannot be placed with memory limits here: the playground quantizes after loading, and a "
        "load with limits is placed by Accelerate's hooks first. Load {dtype} without limits (its weights are "
        "smaller), or place float32, float16 or bfloat16.",
        "这里不能按内存上限放置 {dtype} 权重：playground 在加载之后才量化，而带上限的加载会先由 Accelerate 的钩子放置。"
        "请不带上限加载 {dtype}（它的权重更小），或者放置 float32、float16 或 bfloat16。",
    ),
}
