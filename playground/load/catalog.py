"""What a model name refers to: the catalog, the allowed folders, and a model's config read without its weights.

`resolve(name)` is the edge: it turns what a visitor typed into a `ModelSource`
(the bundled model, a synthetic one, a folder under the allowed roots, or a Hub
id), or a `UserError` saying why not. A path is resolved (symlinks, `..`) and
checked against the roots before anything else, so a refusal reveals nothing
about what exists outside them. `read_config` then reads config.json from the
folder, the synthetic spec or the Hugging Face cache; it never goes to the network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import transformers
from huggingface_hub import constants, try_to_load_from_cache

from playground.core import settings
from playground.core.errors import UserError, shown
from playground.core.i18n import t
from playground.core.paths import ASSETS, BUNDLED_DIR, BUNDLED_NAME, by_role
from playground.load import checkpoint, synthetic

HUB_MODELS = ("distilgpt2", "gpt2", "HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct")
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    label: str
    kind: str  # "bundled", "hub", "synthetic"
    note: str = ""


def catalog() -> list[CatalogEntry]:
    """What the model picker offers. Anything else typed in is resolved by `resolve`."""
    out = [CatalogEntry(BUNDLED_NAME, f"{BUNDLED_NAME} (bundled, works offline)", "bundled",
                        "5.3M-parameter GPT-2 trained on Shakespeare's plays; ships with the playground")]
    out += [CatalogEntry(h, f"{h} (Hugging Face Hub)", "hub", "needs network, or the Hugging Face cache")
            for h in HUB_MODELS]
    _top, names, _why = synthetic.allowed()
    out += [CatalogEntry(n, t("catalog.synthetic", "en", name=n, shape=synthetic.PUBLISHED[n]), "synthetic", synthetic.LABEL)
            for n in synthetic.CONFIGS if n in names]
    return out


def choices(lang: str = "en") -> list[tuple[str, str]]:
    """The model picker's (label, id) pairs, labelled in `lang`."""
    out = []
    for e in catalog():
        if e.kind == "synthetic":
            label = t("catalog.synthetic", lang, name=e.id, shape=synthetic.PUBLISHED[e.id])
        else:
            label = t(f"catalog.{e.kind}", lang, name=e.id)
        out.append((label, e.id))
    return out


@dataclass(frozen=True)
class ModelSource:
    kind: str  # "bundled", "local", "synthetic", "hub"
    ref: str  # the folder's path, or the Hub id: what from_pretrained is given
    name: str  # what the page shows


def allowed_roots() -> list[Path]:
    """Folders a local model may be read from: the bundled models, the Hugging Face cache,
    the synthetic models' folder, and any listed in PLAYGROUND_MODEL_DIRS."""
    return [r.resolve() for r in (ASSETS, Path(constants.HF_HUB_CACHE), *settings.read().model_dirs, synthetic.root())]


def resolve(model: object) -> ModelSource:
    """Turn what the visitor typed into a model source, or explain why not."""
    if not isinstance(model, str) or not model.strip():
        raise UserError.of("err.model_none", bundled=BUNDLED_NAME)
    model = model.strip()
    if len(model) > 300:
        raise UserError.of("err.model_long")
    if model in (BUNDLED_NAME, f"bundled/{BUNDLED_NAME}"):
        return ModelSource("bundled", str(BUNDLED_DIR), BUNDLED_NAME)
    if model in synthetic.CONFIGS:
        synthetic.check_allowed(model)  # a shared Space caps the sizes (PLAYGROUND_SYNTHETIC_MAX)
        return ModelSource("synthetic", str(synthetic.folder(model)), model)
    if "://" in model or model.lower().startswith(("http:", "https:", "ftp:", "file:")):
        host = urlparse(model).netloc or "that address"
        raise UserError.of("err.model_url", host=shown(host, 60), bundled=BUNDLED_NAME)
    if model.startswith(("/", ".", "~")) or ".." in model or "\\" in model:
        return _local_source(model)
    if HUB_ID.match(model):
        return ModelSource("hub", model, model)
    raise UserError.of("err.model_name", model=shown(model), bundled=BUNDLED_NAME)


def _local_source(model: str) -> ModelSource:
    # Resolve symlinks and '..' first, then check the roots, and only then whether
    # it exists: a visitor learns nothing about files outside the allowed folders.
    try:
        real = Path(model).expanduser().resolve(strict=False)
    except (OSError, RuntimeError):
        raise UserError.of("err.path_bad", model=shown(model, 80)) from None
    roots = allowed_roots()
    if not any(real == r or r in real.parents for r in roots):
        # the roots by role, never by path: on a public Space the layout of the machine is nobody's business
        raise UserError.of("err.path_outside", model=shown(model, 80))
    if not real.exists():
        raise UserError.of("err.path_missing", model=shown(model, 80), bundled=BUNDLED_NAME)
    if not real.is_dir():
        raise UserError.of("err.path_file", model=shown(model, 80))
    checkpoint.check_folder(real)
    return ModelSource("local", str(real), real.name)


# -- the Hub (playground.load.hub: the endpoint, the cache, the download) ----------------
def hub_cached(repo_id: str) -> Path | None:
    """The cached snapshot folder holding a Hub model's config.json, or None (its weights may not be
    there yet: `playground.load.hub.cached` says whether the whole snapshot is)."""
    hit = try_to_load_from_cache(repo_id, "config.json")
    return Path(hit).parent if isinstance(hit, str) else None


# -- config.json, without the weights ------------------------------------------------
class NotCached(UserError):
    """A Hub model whose config is not in the local cache: nothing to estimate from offline."""


@dataclass
class ModelConfig:
    source: ModelSource
    config: object  # the transformers config
    folder: Path | None  # where the safetensors headers can be read, if anywhere
    built: bool = True  # synthetic: is the checkpoint written yet


def import_model_classes() -> None:
    """Transformers' Auto classes, imported. Their first import reads every architecture folder Transformers
    ships (~1.1 s here), so the modules that use them import them where they are used: the server imports
    them once its page answers (a load asked for sooner waits in its "import" phase, where it shows)."""
    transformers.AutoConfig, transformers.AutoModelForCausalLM, transformers.AutoTokenizer  # each one imported


def read_config(src: ModelSource) -> ModelConfig:
    """The model's config with no weights read: local config.json, the synthetic spec, or
    the Hugging Face cache (never the network)."""
    from transformers import AutoConfig  # deferred (start-up): import_model_classes says why
    try:
        if src.kind == "synthetic":
            built = synthetic.is_built(src.name)
            return ModelConfig(src, synthetic.config(src.name), synthetic.folder(src.name) if built else None, built)
        folder = Path(src.ref)
        if src.kind == "hub":
            folder = hub_cached(src.ref)
            if folder is None:
                raise NotCached.of("err.not_cached", ref=src.ref)
        # parsed again only once a file in the folder changed: Transformers' parse takes ~2 ms, a load asks for it
        cfg = checkpoint.read_once("config", folder, lambda: AutoConfig.from_pretrained(
            str(folder), local_files_only=True, trust_remote_code=False))
        return ModelConfig(src, cfg, folder)
    except UserError:
        raise
    except Exception as e:  # unknown model_type, custom code, broken JSON
        # the library's words may quote the server's paths: named by role instead
        raise UserError.of("err.config_unreadable", name=src.name,
                           error=f"{type(e).__name__}: {by_role(str(e))[:200]}") from None
