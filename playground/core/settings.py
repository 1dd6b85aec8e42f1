"""Every setting the environment can change, read in one place, and checked at start-up.

The README's table lists them. A shared Space is stricter than a laptop: "on a
Space" means `SPACE_ID` is set (Hugging Face sets it), and then max_new_tokens
defaults to 256 and synthetic models stop at GPT-2 medium.

A malformed value is the operator's mistake, never a visitor's: `read()` raises
`Malformed` (the variable, the value as written, why, and an example of a valid
one), and `python app.py` calls `check_or_exit()` before anything else, so the
server refuses to start with that one line instead of telling every visitor
later. An empty variable counts as unset. `read()` parses the environment each
time it is asked (microseconds), so a test can change a variable and see the effect.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, NoReturn

from playground.core.errors import UserError
from playground.core.units import parse_bytes

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
    memory_budget_bytes: int | None = None  # PLAYGROUND_MEMORY_BUDGET parsed (None when unset)
    threads: int = 0  # PLAYGROUND_THREADS: torch's CPU threads (0 when unset: playground.hw.cpu_threads chooses)

    def to_dict(self) -> dict:
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}


class Malformed(ValueError):
    """A PLAYGROUND_* variable the operator set to something it cannot mean: one line says
    which, what it holds, why it is wrong, and what a valid one looks like."""

    def __init__(self, name: str, value: str, why: str, example: str) -> None:
        self.name, self.value, self.why, self.example = name, value, why, example
        super().__init__(f"{name}={value!r} {why}; set it to e.g. {name}={example}, or unset it for the default.")


def _get(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _int(env: Mapping[str, str], name: str, default: int, example: int, top: int | None = None) -> int:
    """A positive whole number from the environment (at most `top`); the default when unset."""
    raw = _get(env, name)
    if not raw:
        return default
    if not re.fullmatch(r"\d+", raw) or int(raw) < 1:
        raise Malformed(name, raw, "is not a positive whole number", str(example))
    if top is not None and int(raw) > top:
        raise Malformed(name, raw, f"is larger than {top:,}", str(example))
    return int(raw)


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = _get(env, name)
    if raw.lower() in ("", "0", "false", "no", "off"):
        return False
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    raise Malformed(name, raw, "is not a switch (1, true, yes, on; or 0, false, no, off)", "1")


def _budget(env: Mapping[str, str]) -> int | None:
    raw = _get(env, MEMORY_BUDGET_ENV)
    if not raw:
        return None
    try:
        return parse_bytes(raw)
    except UserError:
        raise Malformed(MEMORY_BUDGET_ENV, raw, "is not a memory size (bytes, or a number with KB, MB, GB, "
                        "KiB, MiB or GiB)", "2GB") from None


def _folders(env: Mapping[str, str]) -> tuple[Path, ...]:
    name = "PLAYGROUND_MODEL_DIRS"
    dirs = tuple(Path(d.strip()).expanduser() for d in env.get(name, "").split(os.pathsep) if d.strip())
    for d in dirs:
        if not d.is_dir():
            raise Malformed(name, env.get(name, ""), f"lists {str(d)!r}, which is not a folder",
                            os.pathsep.join(["/data/models", "/srv/models"]))
    return dirs


def _synthetic_dir(env: Mapping[str, str]) -> Path:
    name = "PLAYGROUND_SYNTHETIC_DIR"
    raw = _get(env, name)
    folder = Path(raw or DEFAULT_SYNTHETIC_DIR).expanduser()
    if raw and folder.exists() and not folder.is_dir():
        raise Malformed(name, raw, "is a file, not a folder", "~/.cache/device-playground/synthetic")
    return folder


def _host(env: Mapping[str, str]) -> str:
    raw = _get(env, "PLAYGROUND_HOST")
    if raw and not re.fullmatch(r"[A-Za-z0-9._:\-\[\]]{1,253}", raw):
        raise Malformed("PLAYGROUND_HOST", raw, "is not a host name or an IP address", "127.0.0.1")
    return raw


def _port(env: Mapping[str, str]) -> str:
    raw = _get(env, "PLAYGROUND_PORT")
    if raw and (not re.fullmatch(r"\d{1,5}", raw) or not 1 <= int(raw) <= 65535):
        raise Malformed("PLAYGROUND_PORT", raw, "is not a TCP port (a whole number from 1 to 65535)", "7860")
    return raw


def read(env: Mapping[str, str] | None = None) -> Settings:
    """The settings, or `Malformed` for the first variable that cannot be understood."""
    env = os.environ if env is None else env
    space_id = env.get("SPACE_ID", "").strip()
    on_space = bool(space_id)
    where = f"on the Space {space_id}" if on_space else "not on a Space (SPACE_ID unset)"
    default_tokens = SPACE_MAX_NEW_TOKENS if on_space else LOCAL_MAX_NEW_TOKENS
    max_new = _int(env, "PLAYGROUND_MAX_NEW_TOKENS", default_tokens, 512)
    raw = _get(env, "PLAYGROUND_MAX_NEW_TOKENS")
    tokens_reason = f"PLAYGROUND_MAX_NEW_TOKENS={raw}" if raw else f"default {default_tokens} {where}"
    return Settings(
        on_space=on_space, space_id=space_id, where=where,
        max_new_tokens=max_new, max_new_tokens_reason=tokens_reason,
        max_prompt_chars=_int(env, "PLAYGROUND_MAX_PROMPT_CHARS", 20_000, 20_000),
        max_diagnose_chars=_int(env, "PLAYGROUND_MAX_DIAGNOSE_CHARS", 4_000_000, 4_000_000),
        max_queue=_int(env, "PLAYGROUND_MAX_QUEUE", 32, 32),
        # Gradio copies the page's configuration for every session it sees (~170 KB here) and by
        # default keeps 10,000 of them: 1.7 GB on a server that runs for weeks.
        max_sessions=_int(env, "PLAYGROUND_MAX_SESSIONS", 200, 200),
        max_compare_pairs=_int(env, "PLAYGROUND_MAX_COMPARE_PAIRS", 8, 8),
        synthetic_max=_get(env, "PLAYGROUND_SYNTHETIC_MAX"),  # its names are checked by load.synthetic.allowed
        synthetic_dir=_synthetic_dir(env),
        model_dirs=_folders(env),
        memory_budget=_get(env, MEMORY_BUDGET_ENV), memory_budget_bytes=_budget(env),
        host=_host(env), port=_port(env),
        debug=_flag(env, "PLAYGROUND_DEBUG"),
        threads=_int(env, "PLAYGROUND_THREADS", 0, 2, top=1024),
    )


def refusal(e: Malformed, program: str = "app.py") -> str:
    """The one line a program prints when it refuses to start."""
    return f"{program}: cannot start: {e}"


def check_or_exit(program: str = "app.py", env: Mapping[str, str] | None = None) -> Settings:
    """Parse every PLAYGROUND_* variable now; a malformed one ends the process with one line on
    stderr and exit code 2 (no traceback: it is a setting to fix, not a bug)."""
    try:
        return read(env)
    except Malformed as e:
        exit_on(refusal(e, program))


def exit_on(line: str) -> NoReturn:
    """A start-up refusal: `line` on stderr, exit code 2 (every start-up check of app.py ends here)."""
    print(line, file=sys.stderr, flush=True)
    raise SystemExit(2) from None
