"""The models: the picker, the Hub's reachability, why a synthetic checkpoint is built, a damaged file."""

from playground.core.i18n.words import W

PREFIXES = ("catalog", "hub", "synth", "ckpt")

TEXT: dict[str, W] = {
    # what is wrong with a safetensors file, as a fact (the err.st_* sentences add what to do)
    "ckpt.missing": W("'{name}' is missing", "'{name}' 不存在"),
    "ckpt.unreadable": W("'{name}' is not a readable safetensors file", "'{name}' 不是可读的 safetensors 文件"),
    "ckpt.truncated": W("'{name}' is truncated: its header describes {want}, the file holds {have}",
                        "'{name}' 不完整：它的文件头描述了 {want}，而文件只有 {have}"),
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
    # why the Hub cannot be reached (a field of err.hub_offline)
    "hub.offline_set": W("HF_HUB_OFFLINE is set", "设置了 HF_HUB_OFFLINE"),
    # the address in <...>: an autolink would run on into the full-width parenthesis that follows it
    "hub.unreachable": W("cannot reach <{url}> ({error})", "连不上 <{url}>（{error}）"),
    # the model picker
    "catalog.bundled": W("{name} (bundled, works offline)", "{name}（内置，无需联网）"),
    "catalog.hub": W("{name} (Hugging Face Hub)", "{name}（Hugging Face Hub）"),
    # the published model's layers; the bundled vocabulary makes it smaller (the load report says by how much)
    "catalog.never": W("{label} — {why}", "{label}（{why}）"),
    "catalog.synthetic": W("{name} (the {shape} model's layers, the bundled vocabulary; random weights)",
                           "{name}（{shape} 模型的各层，配内置词表；随机权重）"),
}
