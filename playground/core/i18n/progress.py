"""Progress lines: the loader's, a synthetic build's and Compare's. Each of the loader's begins a phase
(`playground.load.phases.Recorder.phase`), which marks the memory timeline."""

from playground.core.i18n.words import W

PREFIXES = ("progress",)

TEXT: dict[str, W] = {
    # the loader's progress (shown over the report while it runs)
    "progress.download_check": W("download: is '{ref}' in the Hugging Face cache?",
                                 "下载：'{ref}' 在 Hugging Face 缓存里吗？"),
    "progress.download": W("download: {ref}, {done} of {total}", "下载：{ref}，已下载 {done} / {total}"),
    "progress.downloaded": W("download: {ref} is here; checking its safetensors files",
                             "下载：{ref} 已就绪；正在检查它的 safetensors 文件"),
    "progress.estimate": W("estimate: does it fit? (built on the meta device)", "估算：放得下吗？（在 meta 设备上构建）"),
    "progress.tokenizer": W("tokenizer: the safetensors files checked, AutoTokenizer.from_pretrained",
                            "分词器：检查 safetensors 文件，AutoTokenizer.from_pretrained"),
    "progress.context": W("CUDA context: the first call on {device}", "CUDA 上下文：{device} 上的第一次调用"),
    "progress.unload": W("unload: freeing {model}", "卸载：正在释放 {model}"),
    "progress.import": W("import: the architecture's Python code (first load only)",
                         "导入：这个架构的 Python 代码（只在第一次加载时）"),
    "progress.load": W("load: from_pretrained (the checkpoint on disk → the model)", "加载：from_pretrained（磁盘上的检查点 → 模型）"),
    "progress.load_auto": W("load: from_pretrained(device_map='auto')", "加载：from_pretrained(device_map='auto')"),
    "progress.migrate": W("migrate: model.to('{device}')", "迁移：model.to('{device}')"),
    "progress.quantize": W("quantize: torchao, {dtype} weights", "量化：torchao，{dtype} 权重"),
    "progress.migrate_auto": W("migrate: nothing to move (device_map='auto' placed every layer while loading)",
                               "迁移：无需移动（device_map='auto' 在加载时已放好每一层）"),
    "progress.eval": W("model.eval(): dropout off", "model.eval()：关闭 dropout"),
    "progress.loaded": W("loaded", "已加载"),
    # a synthetic model's first build (playground.load.synthetic): the load report's "build" phase
    "progress.synth_build": W("building {name} with random weights (first use only)",
                              "正在用随机权重生成 {name}（只在第一次使用时）"),
    "progress.synth_init": W("init {module}: {done} of {total} MiB", "初始化 {module}：{done} / {total} MiB"),
    "progress.synth_write": W("writing {name}: shard {i} of {n}", "正在写入 {name}：第 {i} / {n} 个分片"),
    "progress.synth_written_one": W("{name} written (1 shard)", "{name} 已写入（1 个分片）"),
    "progress.synth_written": W("{name} written ({n} shards)", "{name} 已写入（{n} 个分片）"),
    "progress.synth_ready": W("{name} ready", "{name} 已就绪"),
    "progress.cmp_pair": W("{i}/{n} {pair}: {step}", "第 {i}/{n} 个组合 {pair}：{step}"),
    "progress.cmp_warmup": W("warm-up (untimed): decode {done}/{n} tokens", "预热（不计时）：解码 {done}/{n} 个 token"),
    "progress.cmp_run": W("run {k} of {runs}: decode {done}/{n} tokens", "第 {k}/{runs} 次：解码 {done}/{n} 个 token"),
    "progress.cmp_done": W("{n} pairs done", "{n} 个组合已完成"),
}
