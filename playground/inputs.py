"""What a visitor may send, and the message they get when it is wrong.

Every entry point (the page, the API, the CLI) passes its arguments through these
checks before anything is loaded or allocated. A `UserError` carries a sentence
that says what was wrong and what to do; the UI shows it as `gr.Error`, the API
returns it as an error, the CLI prints it and exits non-zero. Limits can be set
by environment variables (documented in the README) so that a shared Space can be
stricter than a laptop.
"""

from __future__ import annotations

import math
import os


class UserError(ValueError):
    """A problem with what the visitor asked for, phrased for the visitor."""


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


# 1024 locally, 256 on a Space (SPACE_ID set); PLAYGROUND_MAX_NEW_TOKENS overrides both (see playground.space).
from playground.space import space_settings  # noqa: E402  (below UserError: space imports it lazily)

MAX_NEW_TOKENS = space_settings().max_new_tokens
MAX_PROMPT_CHARS = _env_int("PLAYGROUND_MAX_PROMPT_CHARS", 20_000)


def check_prompt(prompt: object) -> str:
    if not isinstance(prompt, str):
        raise UserError("The prompt must be text.")
    if not prompt.strip():
        raise UserError("The prompt is empty. Type a few words for the model to continue, e.g. 'ROMEO:'.")
    if "\x00" in prompt:
        raise UserError("The prompt contains NUL bytes (binary data). Paste plain text.")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise UserError(
            f"The prompt is {len(prompt):,} characters; the limit is {MAX_PROMPT_CHARS:,}. "
            "Shorten it (the models here have short contexts anyway)."
        )
    return prompt


def check_max_new_tokens(value: object) -> int:
    n = _number(value, "max_new_tokens")
    if not float(n).is_integer() or not 1 <= n <= MAX_NEW_TOKENS:
        raise UserError(f"max_new_tokens must be a whole number from 1 to {MAX_NEW_TOKENS}; got {value!r}.")
    return int(n)


def check_temperature(value: object) -> float:
    t = _number(value, "temperature")
    if not 0 <= t <= 5:
        raise UserError(f"temperature must be between 0 (greedy) and 5; got {value!r}.")
    return float(t)


def check_top_p(value: object) -> float:
    p = _number(value, "top_p")
    if not 0 < p <= 1:
        raise UserError(f"top_p must be in (0, 1]: the share of probability mass to sample from; got {value!r}.")
    return float(p)


def check_seed(value: object) -> int:
    s = _number(value, "seed")
    if not float(s).is_integer() or not 0 <= s < 2**63:
        raise UserError(f"seed must be a whole number from 0 to 2^63-1; got {value!r}.")
    return int(s)


def _number(value: object, name: str) -> float:
    if isinstance(value, bool):
        raise UserError(f"{name} must be a number; got {value!r}.")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise UserError(f"{name} must be a number; got {value[:40]!r}.") from None
    if not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise UserError(f"{name} must be a finite number; got {value!r}.")
    return value
