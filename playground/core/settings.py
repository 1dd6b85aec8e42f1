"""Every setting the environment can change, read in one place.

The README's table lists them. A shared Space is stricter than a laptop: "on a
Space" means `SPACE_ID` is set (Hugging Face sets it), and then max_new_tokens
defaults to 256 and synthetic models stop at GPT-2 medium. `read()` parses the
environment each time it is asked (microseconds), so a test can change a variable
and see the effect.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping

SPACE_MAX_NEW_TOKENS = 256
LOCAL_MAX_NEW_TOKENS = 1024
SPACE_SYNTHETIC_MAX = "synthetic/gpt2-medium"
MEMORY_BUDGET_ENV = "PLAYGROUND_MEMORY_BUDGET"
DEFAULT_SYNTHETIC_DIR = Path.home() / ".cache" / "device-playground" / "synthetic"


@dataclass(frozen=True)
class Settings:
    on_space: bool
    space_id: str
    where: str  # "on the Space a/b" or "not on a Space (SPACE_ID unset)", for reasons
    max_new_tokens: int
    max_new_tokens_reason: str
    max_prompt_chars: int
    max_diagnose_chars: int  # only the two ends of a pasted text are scanned
    max_queue: int  # events waiting in Gradio's queue, all visitors together
    max_sessions: int  # visitor sessions whose page state Gradio keeps in memory
    max_compare_pairs: int
    synthetic_max: str  # as written: "" (the default), "all", "none" or a model name
    synthetic_dir: Path
    model_dirs: tuple[Path, ...]  # PLAYGROUND_MODEL_DIRS, extra folders local models may be read from
    memory_budget: str  # PLAYGROUND_MEMORY_BUDGET as written ("" when unset)
    host: str
    port: str
    debug: bool

    def to_dict(self) -> dict:
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    """A positive whole number from the environment; the default when unset or not a number."""
    try:
        value = int(env.get(name, default))
    except ValueError:
        return default
    return value if value >= minimum else default


def read(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    space_id = env.get("SPACE_ID", "").strip()
    on_space = bool(space_id)
    where = f"on the Space {space_id}" if on_space else "not on a Space (SPACE_ID unset)"
    default_tokens = SPACE_MAX_NEW_TOKENS if on_space else LOCAL_MAX_NEW_TOKENS
    raw = env.get("PLAYGROUND_MAX_NEW_TOKENS", "").strip()
    max_new, tokens_reason = default_tokens, f"default {default_tokens} {where}"
    if raw:
        try:
            if int(raw) < 1:
                raise ValueError
            max_new, tokens_reason = int(raw), f"PLAYGROUND_MAX_NEW_TOKENS={raw}"
        except ValueError:
            tokens_reason = (f"PLAYGROUND_MAX_NEW_TOKENS={raw!r} is not a positive whole number; "
                             f"default {default_tokens} {where}")
    dirs = tuple(Path(d.strip()).expanduser() for d in env.get("PLAYGROUND_MODEL_DIRS", "").split(os.pathsep)
                 if d.strip())
    return Settings(
        on_space=on_space, space_id=space_id, where=where,
        max_new_tokens=max_new, max_new_tokens_reason=tokens_reason,
        max_prompt_chars=_int(env, "PLAYGROUND_MAX_PROMPT_CHARS", 20_000),
        max_diagnose_chars=_int(env, "PLAYGROUND_MAX_DIAGNOSE_CHARS", 4_000_000),
        max_queue=_int(env, "PLAYGROUND_MAX_QUEUE", 32),
        # Gradio copies the page's configuration for every session it sees (~170 KB here) and by
        # default keeps 10,000 of them: 1.7 GB on a server that runs for weeks.
        max_sessions=_int(env, "PLAYGROUND_MAX_SESSIONS", 200),
        max_compare_pairs=_int(env, "PLAYGROUND_MAX_COMPARE_PAIRS", 8),
        synthetic_max=env.get("PLAYGROUND_SYNTHETIC_MAX", "").strip(),
        synthetic_dir=Path(env.get("PLAYGROUND_SYNTHETIC_DIR", "") or DEFAULT_SYNTHETIC_DIR).expanduser(),
        model_dirs=dirs,
        memory_budget=env.get(MEMORY_BUDGET_ENV, "").strip(),
        host=env.get("PLAYGROUND_HOST", ""), port=env.get("PLAYGROUND_PORT", ""),
        debug=bool(env.get("PLAYGROUND_DEBUG")),
    )
