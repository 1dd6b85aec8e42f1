"""The pool of loaded models: sharing, eviction, and the visitors waiting for the lane."""

from playground.core.i18n.words import W

PREFIXES = ("pool",)

TEXT: dict[str, W] = {
    "pool.waited": W(
        "Measured while {n} other {n?visitor|visitors} waited their turn: runs take turns, so none ran beside this one.",
        "测量时有 {n} 位其他访客在排队等候：运行依次进行，没有任何运行与它同时进行。",
    ),
    "pool.waited_none": W("Measured with no other visitor waiting.", "测量时没有其他访客在排队。"),
    "pool.evicted": W(
        "Your model, {model} ({device}, {dtype}), was unloaded at {at} to make room for another visitor's; "
        "nothing ran on another model in its place. Load it again: about {seconds} s.",
        "你的模型 {model}（{device}，{dtype}）已在 {at} 被卸载，为另一位访客的模型腾出内存；"
        "没有用别的模型代替它运行。请重新加载：大约需要 {seconds} 秒。",
    ),
    "pool.evicted_before": W(
        "Your previous model, {model} ({device}, {dtype}), had been unloaded meanwhile to make room for another "
        "visitor's.",
        "你之前的模型 {model}（{device}，{dtype}）在此期间已被卸载，为另一位访客的模型腾出内存。",
    ),
    "pool.shared": W(
        "Already loaded for {n} other {n?visitor|visitors}: shared with you, not loaded again. The figures below were "
        "measured when it was loaded, at {at}.",
        "已经为另外 {n} 位访客加载：与你共用，没有再次加载。下面的数字是它在 {at} 加载时测得的。",
    ),
    "pool.beside": W(
        "The pairs ran beside the {models} {models?model|models} loaded for visitors ({bytes} of RAM), within the memory "
        "they leave: none of them was unloaded.",
        "这些组合与为访客加载的 {models} 个模型（占内存 {bytes}）同时存在，只使用它们剩下的内存："
        "没有卸载其中任何一个。",
    ),
    "pool.beside_none": W("No model was loaded for a visitor: the pairs had the whole memory budget.",
                          "当时没有为访客加载任何模型：这些组合可以使用全部内存预算。"),
}
