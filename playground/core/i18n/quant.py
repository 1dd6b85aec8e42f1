"""The quantized dtypes (int8, int4 through torchao): what a load quantized and skipped, and what it cost."""

from playground.core.i18n.words import W

PREFIXES = ("quant",)

TEXT: dict[str, W] = {
    "quant.missing": W("int8 and int4 need torchao, which is not installed here ({error}): pip install torchao==0.18.0",
                       "int8 和 int4 需要 torchao，这里没有安装（{error}）：pip install torchao==0.18.0"),
    "quant.phase": W("{n} of {of} weight matrices quantized to {dtype} ({tensor}); the weights went from {before} to {after}",
                     "{of} 个权重矩阵中有 {n} 个量化成了 {dtype}（{tensor}）；权重从 {before} 变成 {after}"),
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
        "torchao's packed int4 (two values per byte, Int4WeightOnlyConfig) was tried on this machine just now and "
        "refused; on a CUDA GPU with torchao's kernels, tile_packed_to_4d is the one that runs:",
        "这里的 int4 用的是 torchao 的 IntxWeightOnlyConfig，每个字节只存一个 4 位数值：并不比 int8 小。"
        "torchao 的打包 int4（每字节两个数值，Int4WeightOnlyConfig）刚才在这台机器上试过，被拒绝了；"
        "在装有 torchao 内核的 CUDA GPU 上，能运行的是 tile_packed_to_4d：",
    ),
    "quant.refused": W("`{format}` refused: {error}", "`{format}` 被拒绝：{error}"),
}
