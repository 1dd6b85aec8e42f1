"""Checkpoints on disk: safetensors headers read without the weights, and the checks a folder must pass.

A safetensors file is 8 bytes of header length (little-endian u64), a JSON header
(every tensor's name, dtype, shape and byte offsets), then the data. Reading the
header alone gives the stored dtype and bytes of a checkpoint, and tells whether
the file holds every byte its header promises: a truncated download is refused
here, before the loaded model is unloaded, not by `from_pretrained` after it (which
would leave the shared slot empty). Nothing here unpickles anything.
"""

from __future__ import annotations

import copy
import json
import os
import struct
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from playground.core.errors import UserError
from playground.core.i18n import Said, said
from playground.core.units import fmt_bytes

# safetensors dtype codes -> (torch name, bytes per element)
SAFETENSORS_DTYPES = {
    "F64": ("float64", 8), "F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2),
    "F8_E4M3": ("float8_e4m3fn", 1), "F8_E5M2": ("float8_e5m2", 1),
    "I64": ("int64", 8), "I32": ("int32", 4), "I16": ("int16", 2), "I8": ("int8", 1),
    "U8": ("uint8", 1), "BOOL": ("bool", 1),
}
_FLOAT_CODES = {"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"}
MAX_HEADER = 100 * 2**20  # no real header is this large; a bigger length field means a damaged file

T = TypeVar("T")


def signature(folder: str | Path, also: Iterable[Path] = ()) -> tuple | None:
    """(path, size, inode, mtime in ns) of every file in `folder` (links followed: a Hub snapshot's files are links
    into its blobs) and of the files `also` names, sorted; None when one cannot be listed. Any write, truncation or
    replacement of a file changes its entry."""
    try:
        with os.scandir(folder) as entries:
            stats = [(e.path, e.stat()) for e in entries if e.is_file()]
        stats += [(str(f), f.stat()) for f in also]
    except OSError:
        return None
    return tuple(sorted((f, s.st_size, s.st_ino, s.st_mtime_ns) for f, s in stats))


_READ: dict[tuple[str, str], tuple[tuple, object]] = {}  # (what, folder) -> (its signature, what was read then)


def read_once(what: str, folder: str | Path, read: Callable[[], T], also: Iterable[Path] = ()) -> T:
    """`read()` about `folder` (its config, its headers, a check it passed), read again only once a file in it (or
    one of `also`, files the reading depends on too) changed (`signature`); a copy, so that no caller changes
    another's. A reading that raises is not kept."""
    key, sig = (what, str(folder)), signature(folder, also)
    kept = _READ.get(key)
    if sig is None or kept is None or kept[0] != sig:
        value = read()
        if sig is None:
            return value
        kept = _READ[key] = (sig, value)
    return copy.deepcopy(kept[1])


def read_header(path: str | Path) -> dict:
    """The JSON table at the head of a .safetensors file; the weights are not read."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise ValueError(f"{Path(path).name}: too short to be safetensors")
        (n,) = struct.unpack("<Q", raw)
        if n > MAX_HEADER:
            raise ValueError(f"{Path(path).name}: header of {n} bytes is not plausible")
        header = json.loads(fh.read(n))
    header.pop("__metadata__", None)
    return header


def tensor_ranges(path: str | Path) -> dict[str, tuple[int, int]]:
    """Each tensor's (start, end) byte offsets in the file (the header's data offsets, counted from its start)."""
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
    return {name: (8 + n + info["data_offsets"][0], 8 + n + info["data_offsets"][1])
            for name, info in read_header(path).items()}


def summary(folder: str | Path) -> dict | None:
    """Stored tensors, bytes and dtype of the safetensors files in `folder`, from headers only (read again once a
    file changed)."""
    return read_once("summary", folder, lambda: _summary(folder))


def _summary(folder: str | Path) -> dict | None:
    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        return None
    tensors = stored = 0
    by_dtype: dict[str, int] = {}
    first_float: str | None = None
    for f in files:
        header = read_header(f)
        for name in sorted(header):
            info = header[name]
            begin, end = info["data_offsets"]
            tensors += 1
            stored += end - begin
            by_dtype[info["dtype"]] = by_dtype.get(info["dtype"], 0) + (end - begin)
            if first_float is None and info["dtype"] in _FLOAT_CODES:
                first_float = info["dtype"]
    return dict(
        files=[f.name for f in files], tensors=tensors, stored_bytes=stored,
        file_bytes=sum(f.stat().st_size for f in files),
        bytes_by_dtype={SAFETENSORS_DTYPES.get(k, (k, 0))[0]: v for k, v in by_dtype.items()},
        dtype=SAFETENSORS_DTYPES[first_float][0] if first_float else None,
    )


def check_folder(folder: Path) -> None:
    """A loadable folder has a readable config.json and complete safetensors weights (checked again once a file
    changed: a truncated or replaced file is caught)."""
    read_once("checked", folder, lambda: _check_folder(folder))


def _check_folder(folder: Path) -> None:
    cfg = folder / "config.json"
    if not cfg.is_file():
        raise UserError.of("err.no_config", name=folder.name)
    try:
        json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UserError.of("err.config_json", name=folder.name, error=str(e)) from None
    if not any(folder.glob("*.safetensors")):
        if any(folder.glob("*.bin")) or any(folder.glob("*.pt")) or any(folder.glob("*.pth")):
            raise UserError.of("err.pickle_only", name=folder.name)
        raise UserError.of("err.no_weights", name=folder.name)
    for f in sorted(folder.glob("*.safetensors")):
        check_file(f)


def check_file(path: Path) -> None:
    """The file holds its header and every byte the header promises."""
    problem = file_problem(path)
    if problem is not None:  # the fact, said with what to do about it
        raise UserError.of(_WHAT_TO_DO[problem.key], **problem.fields)


# A file's problem (a fact, `ckpt.*`) -> the error that says it with what to do about it.
_WHAT_TO_DO = {"ckpt.missing": "err.st_missing", "ckpt.unreadable": "err.st_unreadable",
               "ckpt.truncated": "err.st_truncated"}


def file_problem(path: Path) -> Said | None:
    """Why a .safetensors file cannot be loaded (missing, unreadable header, fewer bytes than its
    header promises), as a fact (`ckpt.*`); None when it is complete."""
    name = f"{path.parent.name}/{path.name}"
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))  # struct.error when fewer than 8 bytes
            if n > MAX_HEADER or 8 + n > size:
                raise ValueError("header length")
            header = json.loads(fh.read(n))
        header.pop("__metadata__", None)
        end = max((int(t["data_offsets"][1]) for t in header.values()), default=0)
    except FileNotFoundError:
        return said("ckpt.missing", name=name)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error):
        return said("ckpt.unreadable", name=name)
    if 8 + n + end > size:
        return said("ckpt.truncated", name=name, want=fmt_bytes(8 + n + end), have=fmt_bytes(size))
    return None


# A tokenizer's vocabulary lives in one of these. Without any, Transformers 5 still builds a tokenizer
# from config.json alone: an empty one (one token), which would turn every prompt into nothing.
TOKENIZER_VOCAB = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model",
                   "sentencepiece.bpe.model")


def check_tokenizer(folder: Path) -> None:
    """The folder holds a tokenizer's vocabulary file."""
    if not any((folder / f).is_file() for f in TOKENIZER_VOCAB):
        raise UserError.of("err.no_tokenizer", name=folder.name, files=", ".join(TOKENIZER_VOCAB[:3]))


def disk_bytes(folder: Path | None) -> int:
    """Bytes of safetensors weights in a folder (0 when there is none)."""
    return read_once("disk_bytes", folder, lambda: _disk_bytes(folder)) if folder else 0


def _disk_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*.safetensors")) if folder.is_dir() else 0
