"""A Hugging Face Hub model: reachable, cached, or downloaded in a phase of its own, with byte progress.

`fetch(repo_id, progress)` returns the local snapshot folder of the files a causal
LM needs (config, safetensors weights, tokenizer files, generation config), and
what getting it cost: from the cache it downloads nothing (0 bytes); otherwise
`huggingface_hub.snapshot_download` fetches only those files, and every chunk it
writes reaches `progress` (bytes so far, bytes in all) through its tqdm bars.
The load then reads that folder with `local_files_only=True`, so "load" measures
disk -> RAM only, never the network.

`HF_ENDPOINT` and `HF_HUB_OFFLINE` mean what they mean to huggingface_hub (its
`constants`, read when it is imported): offline, only the cache is used, and
reachability is checked against the endpoint's own scheme, host and port (2 s),
because the client otherwise retries for ~25 s before giving up.
"""

from __future__ import annotations

import io
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlparse

from huggingface_hub import constants, hf_hub_download, snapshot_download, try_to_load_from_cache
from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError
from tqdm.std import tqdm

from playground.core.errors import UserError
from playground.core.i18n import Said, said
from playground.core.paths import BUNDLED_NAME

# What AutoModelForCausalLM and AutoTokenizer read; nothing else (no .bin, onnx, flax, gguf).
FILES = ["config.json", "generation_config.json", "*.safetensors", "model.safetensors.index.json",
         "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt",
         "tokenizer.model", "added_tokens.json", "chat_template.jinja", "chat_template.json"]
SKIP = ["*/*"]  # top-level files only: onnx/, original/, ... hold other formats of the same weights

Bytes = Callable[[int, int], None]  # (bytes written so far, bytes in all)


@dataclass(frozen=True)
class Fetched:
    folder: Path  # the snapshot folder in the Hugging Face cache
    bytes: int  # downloaded by this fetch (0 from the cache)
    seconds: float
    files: int  # files in the snapshot the load reads
    from_cache: bool


def endpoint() -> tuple[str, str, int]:
    """(scheme, host, port) of the Hub huggingface_hub talks to (HF_ENDPOINT, or huggingface.co)."""
    url = urlparse(constants.ENDPOINT)
    scheme = url.scheme or "https"
    return scheme, url.hostname or "huggingface.co", url.port or (443 if scheme == "https" else 80)


def offline() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE), exactly as huggingface_hub reads it."""
    return constants.is_offline_mode()


def reachable(timeout: float = 2.0) -> tuple[bool, Said | str]:
    """Can a TCP connection be opened to the endpoint's host and port? (False, why) if not: a sentence
    said in the page's language (`str()` of a UserError that quotes it is English)."""
    if offline():
        return False, said("hub.offline_set")
    scheme, host, port = endpoint()
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        return True, ""
    except OSError as e:
        return False, said("hub.unreachable", url=f"{scheme}://{host}:{port}", error=f"{e.__class__.__name__}: {e}")


def cached(repo_id: str) -> Path | None:
    """The cached snapshot folder of `repo_id` with config.json and safetensors weights, or None.
    No network: huggingface_hub checks the cached tree listing, when it has one, for missing files."""
    try:
        folder = Path(snapshot_download(repo_id, allow_patterns=FILES, ignore_patterns=SKIP, local_files_only=True))
    except Exception:  # not cached, or cached incompletely: LocalEntryNotFoundError, IncompleteSnapshotError
        return None
    return folder if (folder / "config.json").is_file() and any(folder.glob("*.safetensors")) else None


def config_folder(repo_id: str) -> Path:
    """The cache folder holding `repo_id`'s config.json, downloading that file alone when it is not
    cached (a few KB): what the memory check reads before any weight is fetched."""
    hit = try_to_load_from_cache(repo_id, "config.json")
    if isinstance(hit, str):
        return Path(hit).parent
    ok, why = reachable()
    if not ok:
        raise UserError.of("err.hub_offline", ref=repo_id, why=why, bundled=BUNDLED_NAME)
    try:
        return Path(hf_hub_download(repo_id, "config.json")).parent
    except Exception as e:
        raise _download_error(repo_id, e) from None


def fetch(repo_id: str, progress: Bytes | None = None, blobs_before: set[Path] | None = None) -> Fetched:
    """The snapshot folder of `repo_id`: from the cache, or downloaded now (only the files in FILES).
    `bytes` counts every file that was not in the cache at `blobs_before` (`blobs(repo_id)`, taken
    before config.json came down), or before this call."""
    t0 = time.perf_counter()
    blobs_before = blobs(repo_id) if blobs_before is None else blobs_before
    folder = cached(repo_id)
    if folder is not None:
        return Fetched(folder, _new_bytes(folder, blobs_before), time.perf_counter() - t0, _count(folder),
                       not _new_bytes(folder, blobs_before))
    ok, why = reachable()
    if not ok:
        raise UserError.of("err.hub_offline", ref=repo_id, why=why, bundled=BUNDLED_NAME)

    try:
        # A dry run first (the repo's file list and one HEAD per file): how many bytes are coming, so
        # that the progress has a true total from its first update (the bars learn it file by file).
        todo = snapshot_download(repo_id, allow_patterns=FILES, ignore_patterns=SKIP, dry_run=True)
        total = sum(f.file_size or 0 for f in todo if f.will_download)
        folder = Path(snapshot_download(repo_id, allow_patterns=FILES, ignore_patterns=SKIP,
                                        tqdm_class=_bars(progress, total)))
    except Exception as e:
        raise _download_error(repo_id, e) from None
    return Fetched(folder, _new_bytes(folder, blobs_before), time.perf_counter() - t0, _count(folder), False)


def blobs(repo_id: str) -> set[Path]:
    """The files `repo_id` has in the Hugging Face cache now (its blobs), to tell later what came down."""
    folder = Path(constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--")) / "blobs"
    return {p.resolve() for p in folder.iterdir()} if folder.is_dir() else set()


def _new_bytes(folder: Path, before: set[Path]) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file() and p.resolve() not in before)


def _count(folder: Path) -> int:
    return sum(1 for p in folder.iterdir() if p.is_file())


def _download_error(repo_id: str, e: Exception) -> UserError:
    """What went wrong, said so that the visitor can act; the model already loaded is untouched."""
    if isinstance(e, GatedRepoError):
        return UserError.of("err.hub_gated", ref=repo_id)
    if isinstance(e, (RepositoryNotFoundError, RevisionNotFoundError)):
        return UserError.of("err.hub_missing", ref=repo_id)
    first = (str(e).strip().splitlines() or [""])[0][:200]
    return UserError.of("err.hub_download", ref=repo_id, error=f"{type(e).__name__}: {first}", bundled=BUNDLED_NAME)


def _bars(progress: Bytes | None, total: int):
    """A tqdm class for snapshot_download that hands its byte count to `progress` (at most 10 times a
    second, and at the end). huggingface_hub makes one bar per kind of byte (received, written) and one
    for the file count; for a plain HTTP download the byte bars move together."""
    lock = threading.Lock()
    seen = {"done": 0, "at": 0.0}

    class Bar(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs.pop("name", None)  # huggingface_hub's own bars take a name; tqdm's do not
            # always counting (HF_HUB_DISABLE_PROGRESS_BARS would make tqdm skip its updates), never printing
            kwargs.update(disable=False, file=io.StringIO())
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            out = super().update(n)
            if progress is not None and self.unit == "B":
                with lock:
                    seen["done"] = done = min(max(seen["done"], int(self.n)), total)
                    now = time.perf_counter()
                    if now - seen["at"] >= 0.1 or done >= total:
                        seen["at"] = now
                        progress(done, total)
            return out

    return Bar
