"""Words for faults: a damaged or unbuildable checkpoint, a full or read-only disk, a load that failed
after the unload (and the model loaded back), and a server that is shutting down."""

from playground.core.i18n.words import W

TEXT: dict[str, W] = {
    "err.st_missing": W("'{name}' is missing. Download or save it again.", "'{name}' 不存在。请重新下载或保存。"),
    # what is wrong with a safetensors file, as a fact (the err.st_* sentences add what to do)
    "ckpt.missing": W("'{name}' is missing", "'{name}' 不存在"),
    "ckpt.unreadable": W("'{name}' is not a readable safetensors file", "'{name}' 不是可读的 safetensors 文件"),
    "ckpt.truncated": W("'{name}' is truncated: its header describes {want}, the file holds {have}",
                        "'{name}' 不完整：它的文件头描述了 {want}，而文件只有 {have}"),
    "err.no_tokenizer": W(
        "'{name}' has no tokenizer (none of {files}...). Save the tokenizer next to the model "
        "(tokenizer.save_pretrained).",
        "'{name}' 没有分词器（{files}... 都不存在）。请把分词器保存在模型旁边（tokenizer.save_pretrained）。",
    ),
    # why a synthetic checkpoint is (re)built: the note of the load report's "build" phase
    "synth.why.first": W("first use: it was not built yet", "第一次使用：还没有生成过"),
    "synth.why.config": W("its config.json is damaged: {error}", "它的 config.json 已损坏：{error}"),
    "synth.why.not_json": W("not valid JSON", "不是有效的 JSON"),
    "synth.why.config_differs": W(
        "its config.json does not describe {name} ({field} is {found}, expected {want})",
        "它的 config.json 描述的不是 {name}（{field} 是 {found}，应为 {want}）",
    ),
    "synth.why.weights": W("its weights are damaged: {problem}", "它的权重已损坏：{problem}"),
    "synth.why.index": W("its shard index is damaged ({error})", "它的分片索引已损坏（{error}）"),
    "synth.why.tokenizer": W("its tokenizer file {file} is missing or damaged", "它的分词器文件 {file} 缺失或已损坏"),
    "phase.build": W(
        "checkpoint written with random weights, because {why}",
        "用随机权重写出了检查点，原因：{why}",
    ),
    "report.build": W("writing the synthetic checkpoint", "写出合成模型的检查点"),
    # a build that cannot be done: what is wrong, with the folder by role, and what to do
    "err.disk_full": W(
        "Not enough disk space to build {name} in {folder}: it needs {need}, {free} is free. Nothing was "
        "unloaded. Free some space there, or point PLAYGROUND_SYNTHETIC_DIR at a disk with room.",
        "磁盘空间不足，无法在{folder}中生成 {name}：需要 {need}，只剩 {free}。"
        "没有卸载任何模型。请在那里腾出空间，或把 PLAYGROUND_SYNTHETIC_DIR 指向空间足够的磁盘。",
    ),
    "err.file_limit": W(
        "Could not build {name} in {folder}: the server's file-size limit (ulimit -f) stopped it from "
        "writing {file} ({need} needed). Nothing was unloaded. Raise the limit for the server's process.",
        "无法在{folder}中生成 {name}：服务器进程的文件大小上限（ulimit -f）使它无法写入 {file}"
        "（需要 {need}）。没有卸载任何模型。请提高服务器进程的这个上限。",
    ),
    "err.read_only": W(
        "Could not build {name}: {folder} is read-only here. Nothing was unloaded. Make it writable, or point "
        "PLAYGROUND_SYNTHETIC_DIR at a writable folder.",
        "无法生成 {name}：{folder}在这里是只读的。没有卸载任何模型。"
        "请让它可写，或把 PLAYGROUND_SYNTHETIC_DIR 指向一个可写的文件夹。",
    ),
    "err.damaged_rebuild": W(
        "{name}'s checkpoint is damaged ({why}), and rebuilding it failed. {error}",
        "{name} 的检查点已损坏（{why}），重新生成也失败了。{error}",
    ),
    # a load that failed after the model before it was freed
    "err.restored": W(
        "{error} It failed after the model before it was freed: that model, {previous} ({device}, {dtype}), "
        "was loaded back and keeps serving.",
        "{error} 失败发生在之前的模型被释放之后：之前的模型 {previous}（{device}，{dtype}）已重新加载，继续提供服务。",
    ),
    "err.restore_failed": W(
        "{error} It failed after the model before it was freed, and loading that model, {previous}, back "
        "failed too ({again}). No model is loaded: press Load.",
        "{error} 失败发生在之前的模型被释放之后，而把那个模型 {previous} 重新加载也失败了（{again}）。"
        "现在没有加载任何模型：请点“加载”。",
    ),
    "err.closing": W(
        "The server is shutting down; nothing new starts now. Try again in a minute.",
        "服务器正在关闭，现在不再开始新的任务。请过一分钟再试。",
    ),
}
