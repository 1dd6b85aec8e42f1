"""Is a checkpoint folder sound, and can one be written: the checks made before anything is unloaded.

A model change must never cost the model already loaded unless the new one is
certain to load, so everything `from_pretrained` would trip on is looked at
first, without reading a weight: config.json parses (through `AutoConfig`, as
`from_pretrained` parses it) and, for a synthetic model, still describes its
spec; every safetensors file (every shard its index names) holds every byte its
header promises; the tokenizer's files are there and parse. A synthetic
checkpoint that fails is rebuilt; a checkpoint that cannot be written (a full
disk, a file-size limit, a read-only folder) is explained: which folder (by
role, never by path), how many bytes, and which variable moves it.
"""

from __future__ import annotations

import errno
import filecmp
import json
import shutil
from pathlib import Path

from playground.core.errors import UserError
from playground.core.i18n import Said, said
from playground.core.paths import by_role
from playground.core.units import fmt_bytes
from playground.load import checkpoint

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")  # what a synthetic build copies from the bundled model
SLACK = 4 * 2**20  # config, tokenizer, index and README next to the weights


def synthetic_problem(out: Path, name: str, expected, tokenizer_from: Path) -> Said | None:
    """Why the synthetic checkpoint in `out` cannot be loaded as `name` (whose config is
    `expected`, and whose tokenizer files are copies of those in `tokenizer_from`), or None
    when it is complete. "Not built yet" is a reason too."""
    if not (out / "config.json").is_file():
        return said("synth.why.first")
    problem = config_problem(out, name, expected)
    if problem is not None:
        return problem
    index = out / "model.safetensors.index.json"
    if index.is_file():
        try:
            files = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            return said("synth.why.index", error=type(e).__name__)
    else:
        files = ["model.safetensors"]
    for f in files:
        problem = checkpoint.file_problem(out / f)
        if problem is not None:
            return said("synth.why.weights", problem=problem)
    for f in TOKENIZER_FILES:  # byte for byte the files the build copied (0.3 ms; parsing them takes 10)
        try:
            same = filecmp.cmp(out / f, tokenizer_from / f, shallow=False)
        except OSError:
            same = False
        if not same:
            return said("synth.why.tokenizer", file=f)
    return None


def config_problem(out: Path, name: str, expected) -> Said | None:
    """config.json parsed as from_pretrained parses it, and the shape it gives compared with the spec's."""
    from transformers import AutoConfig  # deferred (start-up): catalog.import_model_classes
    try:
        json.loads((out / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return said("synth.why.config", error=said("synth.why.not_json"))
    try:
        found = AutoConfig.from_pretrained(out, local_files_only=True, trust_remote_code=False)
    except Exception as e:  # an unknown model_type, a value of the wrong type: from_pretrained would raise the same
        return said("synth.why.config", error=f"{type(e).__name__}: {by_role(str(e).splitlines()[0])[:160]}")
    keys = ("model_type", "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "num_key_value_heads", "intermediate_size", "max_position_embeddings", "tie_word_embeddings")
    for key in keys:
        want, got = getattr(expected, key, None), getattr(found, key, None)
        if want != got:
            return said("synth.why.config_differs", name=name, field=key, found=got, want=want)
    return None


# -- writing ---------------------------------------------------------------------
def check_space(parent: Path, need: int, name: str) -> None:
    """Refuse a build the disk cannot hold, before a byte of it is allocated or written."""
    free = shutil.disk_usage(parent).free
    if free < need + SLACK:
        raise UserError.of("err.disk_full", name=name, folder=said("path.synthetic"), need=fmt_bytes(need + SLACK),
                           free=fmt_bytes(free))


def write_failure(e: BaseException, name: str, parent: Path, need: int) -> UserError | None:
    """What a failed write means to the operator, or None when it is not a disk's fault.

    safetensors reports its own I/O errors as `SafetensorError` with the OS's words in the
    message ("No space left on device (os error 28)"), not as an OSError with an errno."""
    code = e.errno if isinstance(e, OSError) else None
    text = str(e)
    folder = said("path.synthetic")
    if code in (errno.ENOSPC, errno.EDQUOT) or "os error 28" in text or "No space left" in text:
        free = shutil.disk_usage(parent).free if parent.exists() else 0
        return UserError.of("err.disk_full", name=name, folder=folder, need=fmt_bytes(need + SLACK),
                            free=fmt_bytes(free))
    if code == errno.EFBIG or "os error 27" in text or "File too large" in text:
        return UserError.of("err.file_limit", name=name, folder=folder, file=_file_of(e), need=fmt_bytes(need))
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or "os error 30" in text or "os error 13" in text:
        return UserError.of("err.read_only", name=name, folder=folder)
    return None


def _file_of(e: BaseException) -> str:
    """The file name an OSError names (its last part only: the folder is named by role)."""
    path = getattr(e, "filename", None)
    return Path(path).name if path else "model.safetensors"
