"""What a visitor may send: each check turns a raw value into a typed one, or says why not.

Every entry point (the page, the API, the CLI) calls these once, at the edge, before
anything is loaded or allocated; what they return (an int, a float, a
`GenerationParams`) is what the inner code takes, and it does not check again.

A public Space is hostile ground: anything a browser can send, a script can send
too, including values the page's sliders never produce (NaN, 10**400, a list, a
megabyte of text, an unpaired UTF-16 surrogate that no tokenizer accepts). Each
check turns such a value into a sentence (a `UserError`), never into a traceback.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from playground.core import settings
from playground.core.errors import UserError, shown
from playground.core.units import bytes_of

DEFAULT_PROMPT = "ROMEO:"  # the page's, the CLI's and the lab's prompt when none is given


# The page's first generation: sampled, so that the bundled model writes varied verse rather than
# greedy decoding's loop ("I am a man, and I am a man..."), with a fixed seed, so that it is the
# same every time. Greedy is one click away; Compare and the bench stay greedy.
SAMPLED = dict(temperature=0.8, top_p=0.95, seed=0)


@dataclass(frozen=True)
class GenerationParams:
    """How to generate, checked: a token budget, temperature (0 is greedy), top_p, seed, and whether
    to apply the tokenizer's chat template (when it has one) to the prompt."""

    max_new_tokens: int = 64
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    chat_template: bool = True

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def generation_params(max_new_tokens: object, temperature: object, top_p: object, seed: object,
                      chat_template: object = True) -> GenerationParams:
    return GenerationParams(max_new_tokens=check_max_new_tokens(max_new_tokens),
                            temperature=check_temperature(temperature), top_p=check_top_p(top_p),
                            seed=check_seed(seed), chat_template=check_flag(chat_template, "chat_template"))


def check_flag(value: object, name: str) -> bool:
    """A yes/no: a bool (JSON true/false), or 0/1."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise UserError.of("err.flag", name=name, got=shown(value, 40))


def _check_unicode(text: str, what: str) -> None:
    # JSON can carry "\ud800", an unpaired UTF-16 surrogate: a Python str holds it, but it is
    # not a character and cannot be encoded to UTF-8, which the tokenizer needs.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise UserError.of("err.unicode", what=what, what_zh={"prompt": "提示词"}.get(what, "粘贴的文本"),
                           code=f"{ord(text[e.start]):04X}", at=e.start) from None


def _check_text(text: object, limit: int, keys: tuple[str, str, str]) -> str:
    """A visitor's text: a string, at most `limit` characters, not blank; `keys`: the errors saying
    which of the three it is not (not a string, too long, blank)."""
    if not isinstance(text, str):
        raise UserError.of(keys[0])
    if len(text) > limit:
        raise UserError.of(keys[1], n=len(text), limit=limit)
    if not text.strip():
        raise UserError.of(keys[2])
    return text


def check_prompt(prompt: object) -> str:
    prompt = _check_text(prompt, settings.read().max_prompt_chars,
                         ("err.prompt_type", "err.prompt_long", "err.prompt_empty"))
    if "\x00" in prompt:
        raise UserError.of("err.prompt_nul")
    _check_unicode(prompt, "prompt")
    return prompt


def check_diagnose_text(text: object) -> str:
    """A pasted traceback or error line for the diagnoser: text, not empty, not a whole log."""
    text = _check_text(text, settings.read().max_diagnose_chars, ("err.diag_type", "err.diag_long", "err.diag_empty"))
    _check_unicode(text, "pasted text")
    return text


def check_max_new_tokens(value: object) -> int:
    return _whole(value, "max_new_tokens", 1, settings.read().max_new_tokens)


MAX_FIT_CONTEXT = 1 << 20  # tokens: a million, beyond every model's context
MAX_FIT_BATCH = 1024


def check_context_tokens(value: object) -> int:
    """The context length a fit is asked about: a whole number of tokens, 1 to MAX_FIT_CONTEXT."""
    return _whole(value, "context", 1, MAX_FIT_CONTEXT)


def check_batch(value: object) -> int:
    return _whole(value, "batch", 1, MAX_FIT_BATCH)


def check_temperature(value: object) -> float:
    t = _number(value, "temperature")
    if not 0 <= t <= 5:
        raise UserError.of("err.temperature", got=shown(value, 40))
    return float(t)


def check_top_p(value: object) -> float:
    p = _number(value, "top_p")
    if not 0 < p <= 1:
        raise UserError.of("err.top_p", got=shown(value, 40))
    return float(p)


def check_seed(value: object) -> int:
    return _whole(value, "seed", 0, 2**63 - 1, hi_text="2^63-1")


def check_whole(value: object, name: str, lo: int, hi: int) -> int:
    """A whole number from `lo` to `hi` (a string of digits too), or a UserError naming `name`."""
    return _whole(value, name, lo, hi)


def _whole(value: object, name: str, lo: int, hi: int, hi_text: str = "") -> int:
    n = _number(value, name)
    # compared as Python ints: JSON may carry 10**400, which float() cannot hold
    if (isinstance(n, float) and not n.is_integer()) or not lo <= int(n) <= hi:
        raise UserError.of("err.whole", name=name, lo=lo, hi=hi_text or hi, got=shown(value, 40))
    return int(n)


def _number(value: object, name: str) -> int | float:
    """An int (any size) or a finite float; bools, NaN, infinities and other types are refused."""
    if isinstance(value, bool):
        raise UserError.of("err.number", name=name, got=repr(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text) if text.lstrip("+-").isdigit() and len(text) <= 30 else float(text)
        except ValueError:
            raise UserError.of("err.number", name=name, got=shown(text, 40)) from None
    if isinstance(value, int):
        return value
    if not isinstance(value, float):
        raise UserError.of("err.number", name=name, got=shown(value, 40))
    if math.isnan(value) or math.isinf(value):
        raise UserError.of("err.finite", name=name, got=repr(value))
    return value


# ---------------------------------------------------------------- memory limits for a placed load

LIMITS_EXAMPLE = "cpu=120MB,disk"
_LIMIT_DEVICE = re.compile(r"(cpu|mps|cuda)(?::(\d{1,3}))?")


@dataclass(frozen=True)
class Placement:
    """Memory limits per device (bytes), in Accelerate's order (GPUs by index, mps, cpu), and whether the disk
    tier may take what does not fit: what `from_pretrained(device_map="auto", max_memory=..., offload_folder=...)`
    is given. Hashable: a model loaded with it is keyed by it. `str()` writes it back as `check_limits` reads it."""

    limits: tuple[tuple[str, int], ...]
    disk: bool = False

    def limit(self, device: str) -> int | None:
        return dict(self.limits).get(device)

    def __str__(self) -> str:
        return ",".join([f"{d}={_size_text(n)}" for d, n in self.limits] + (["disk"] if self.disk else []))


def _size_text(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def _device_order(device: str) -> tuple[int, int]:
    kind, _, index = device.partition(":")
    return ({"cuda": 0, "mps": 1, "cpu": 2}[kind], int(index or 0))


def check_limits(value: object) -> Placement:
    """'cpu=120MB,disk' or 'cuda:0=2GB,cpu=8GB,disk': each device once with a size (KB/MB/GB are powers of
    1000, KiB/MiB/GiB of 1024), and `disk` to let Accelerate offload what does not fit to the disk. A device
    left out is not limited (it offers what it has free)."""
    if not isinstance(value, str):
        raise UserError.of("place.err.limits_type", example=LIMITS_EXAMPLE)
    if len(value) > 200:
        raise UserError.of("place.err.limits_long", n=len(value))
    items = [x.strip() for x in value.split(",") if x.strip()]
    if not items:
        raise UserError.of("place.err.limits_empty", example=LIMITS_EXAMPLE)
    limits: dict[str, int] = {}
    disk = False
    for item in items:
        if item.lower() == "disk":
            disk = True
            continue
        name, eq, size = item.partition("=")
        m = _LIMIT_DEVICE.fullmatch(name.strip().lower())
        if not m or not eq:
            raise UserError.of("place.err.limit_item", got=shown(item, 40), example=LIMITS_EXAMPLE)
        device = "cuda:" + (m.group(2) or "0") if m.group(1) == "cuda" else m.group(1)
        if m.group(1) != "cuda" and m.group(2) is not None:
            raise UserError.of("place.err.limit_item", got=shown(item, 40), example=LIMITS_EXAMPLE)
        n = bytes_of(size)
        if n is None or n <= 0:
            raise UserError.of("place.err.limit_size", got=shown(size.strip(), 40), device=device)
        if device in limits:
            raise UserError.of("place.err.limit_twice", device=device)
        limits[device] = n
    if not limits and not disk:
        raise UserError.of("place.err.limits_empty", example=LIMITS_EXAMPLE)
    return Placement(tuple(sorted(limits.items(), key=lambda kv: _device_order(kv[0]))), disk)
