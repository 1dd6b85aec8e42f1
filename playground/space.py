"""The Hugging Face Space: the limits a shared Space applies, and a deployable folder.

A Space is a git repository that Hugging Face runs. The front matter of its
README.md says how (`sdk: gradio`, the preinstalled Gradio `sdk_version`,
`app_file`, `python_version`, the suggested hardware); `requirements.txt` at
its root is installed on top. `python -m playground.space build OUT_DIR`
assembles exactly that from this repository: app.py, the playground package with
the bundled model, the runtime requirements, and spaces/README.md as README.md.

Every visitor of a Space shares one Python process, and so one model slot (see
`playground.slot`) and one machine: free CPU hardware is 2 vCPUs and 16 GB of
RAM. So on a Space the playground is stricter than on a laptop, by documented
environment variables (set them in the Space's settings to change them):

- `PLAYGROUND_MAX_NEW_TOKENS`: the largest max_new_tokens a visitor may ask for.
  Default 256 on a Space, 1024 elsewhere. One visitor's long run makes every
  other visitor wait for the slot.
- `PLAYGROUND_SYNTHETIC_MAX`: the largest synthetic model that may be built and
  loaded: a name such as `synthetic/gpt2-medium` (everything up to that size is
  allowed), `all`, or `none`. Default `synthetic/gpt2-medium` on a Space
  (1.4 GB of float32 weights), `all` elsewhere. A 1.5B-parameter model needs
  6 GB just for its float32 weights, and writing it first takes longer still.

"On a Space" means the `SPACE_ID` environment variable is set (Hugging Face sets
it, together with `SYSTEM=spaces`, which Gradio itself checks). Setting only
`SPACE_ID` locally therefore turns on the playground's Space limits without
Gradio's own Space behaviour.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from playground import synthetic, zerogpu

REPO = Path(__file__).resolve().parent.parent

SPACE_MAX_NEW_TOKENS = 256
LOCAL_MAX_NEW_TOKENS = 1024
SPACE_SYNTHETIC_MAX = "synthetic/gpt2-medium"

# What a built Space folder leaves out of the package, and why.
EXCLUDED = {
    "assets/corpus": "the training text: only train_bundled.py reads it, never the app",
    "__pycache__": "bytecode, rebuilt on the Space",
}
# Only these may be replaced when building into a folder that is not empty
# (e.g. a clone of the Space's repository, whose .git is kept).
BUILT_NAMES = {"app.py", "playground", "requirements.txt", "README.md", ".gitattributes"}
KEPT_NAMES = {".git"}

GITATTRIBUTES = """\
# Binary files go through Git LFS (the Hub refuses plain-git files over 10 MB).
*.safetensors filter=lfs diff=lfs merge=lfs -text
"""

REQUIREMENTS_HEADER = """\
# Runtime requirements of the device playground, copied from the repository's
# requirements.txt by `python -m playground.space build` (the test tools are left out).
# On a Space, Gradio is preinstalled at the README's sdk_version (the same pin as below).
# torch from PyPI is the CUDA build on Linux: a download of several GB, which a Space
# handles, and the same wheel then runs on CPU and GPU hardware alike.
"""


@dataclass
class SpaceSettings:
    on_space: bool
    space_id: str
    zero_gpu: bool
    max_new_tokens: int
    max_new_tokens_reason: str
    synthetic_max: str | None  # the largest synthetic model allowed; None: none allowed
    synthetic_allowed: list[str] = field(default_factory=list)
    synthetic_reason: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _size(name: str) -> float:
    """Published parameter count ('124M', '1.5B') as a number, to order the synthetic models."""
    s = synthetic.PUBLISHED[name]
    return float(s[:-1]) * {"M": 1e6, "B": 1e9}[s[-1]]


def synthetic_by_size() -> list[str]:
    return sorted(synthetic.CONFIGS, key=_size)


def space_settings(env: dict | None = None) -> SpaceSettings:
    """Whether this is a Space, and the caps that follow (each with its reason)."""
    env = os.environ if env is None else env
    space_id = env.get("SPACE_ID", "").strip()
    on_space = bool(space_id)
    where = f"on the Space {space_id}" if on_space else "not on a Space (SPACE_ID unset)"

    default_tokens = SPACE_MAX_NEW_TOKENS if on_space else LOCAL_MAX_NEW_TOKENS
    raw = env.get("PLAYGROUND_MAX_NEW_TOKENS", "").strip()
    if not raw:
        max_new, tokens_reason = default_tokens, f"default {default_tokens} {where}"
    else:
        try:
            max_new = int(raw)
            if max_new < 1:
                raise ValueError
            tokens_reason = f"PLAYGROUND_MAX_NEW_TOKENS={raw}"
        except ValueError:
            max_new = default_tokens
            tokens_reason = f"PLAYGROUND_MAX_NEW_TOKENS={raw!r} is not a positive whole number; default {default_tokens} {where}"

    ordered = synthetic_by_size()
    default_max = SPACE_SYNTHETIC_MAX if on_space else ordered[-1]
    raw = env.get("PLAYGROUND_SYNTHETIC_MAX", "").strip()
    name = raw if raw.startswith("synthetic/") else f"synthetic/{raw}"
    if not raw:
        syn_max, syn_reason = default_max, f"default {'up to ' + default_max if on_space else 'all'} {where}"
    elif raw.lower() == "none":
        syn_max, syn_reason = None, "PLAYGROUND_SYNTHETIC_MAX=none"
    elif raw.lower() == "all":
        syn_max, syn_reason = ordered[-1], "PLAYGROUND_SYNTHETIC_MAX=all"
    elif name in synthetic.CONFIGS:
        syn_max, syn_reason = name, f"PLAYGROUND_SYNTHETIC_MAX={raw}"
    else:
        syn_max = default_max
        syn_reason = (f"PLAYGROUND_SYNTHETIC_MAX={raw!r} names no synthetic model "
                      f"(use one of {', '.join(ordered)}, all or none); default {default_max} {where}")
    allowed = [] if syn_max is None else [n for n in ordered if _size(n) <= _size(syn_max)]
    return SpaceSettings(
        on_space=on_space, space_id=space_id, zero_gpu=zerogpu.active(),
        max_new_tokens=max_new, max_new_tokens_reason=tokens_reason,
        synthetic_max=syn_max, synthetic_allowed=allowed, synthetic_reason=syn_reason,
    )


def check_synthetic(name: str, settings: SpaceSettings | None = None) -> None:
    """Refuse a synthetic model larger than this process allows, saying what is allowed."""
    from playground.inputs import UserError  # here, not at the top: inputs reads space_settings()

    settings = settings or space_settings()
    if name in settings.synthetic_allowed:
        return
    if not settings.synthetic_allowed:
        raise UserError(f"{name} is not available here: synthetic models are switched off "
                        f"({settings.synthetic_reason}).")
    raise UserError(
        f"{name} is too large for this {'shared Space' if settings.on_space else 'playground'} "
        f"({settings.synthetic_reason}). Pick one of: {', '.join(settings.synthetic_allowed)}; "
        "run the playground on your own machine for the larger ones."
    )


# ---------------------------------------------------------------- building the Space folder

@dataclass
class BuildReport:
    out_dir: str
    files: list[str]  # relative paths, sorted
    total_bytes: int
    excluded: dict[str, str]  # what was left out -> why

    def to_dict(self) -> dict:
        return asdict(self)


def build(out_dir: str | os.PathLike, repo: Path = REPO) -> BuildReport:
    """Assemble a deployable Space folder at `out_dir` (new, empty, or a previous build)."""
    from playground.inputs import UserError

    out = Path(out_dir).expanduser().resolve()
    package = repo / "playground"
    # Never build over the sources the build copies from (spaces/README.md, the package).
    sources = [repo / "playground", repo / "spaces", repo / "tests"]
    if out == repo.resolve() or any(out == f.resolve() or f.resolve() in out.parents for f in sources):
        raise UserError(f"{out} is the repository or inside its playground/, spaces/ or tests/ folder; "
                        "build somewhere else, e.g. /tmp/device-playground-space.")
    if out.exists():
        if not out.is_dir():
            raise UserError(f"{out} is a file; give a folder.")
        strangers = sorted(p.name for p in out.iterdir() if p.name not in BUILT_NAMES | KEPT_NAMES)
        if strangers:
            raise UserError(f"{out} holds files a build did not make ({', '.join(strangers[:5])}); "
                            "give a new or empty folder, or a clone of the Space's repository.")
        for name in BUILT_NAMES:
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)

    shutil.copy2(repo / "app.py", out / "app.py")
    shutil.copytree(package, out / "playground", ignore=_ignore(package))
    (out / "requirements.txt").write_text(REQUIREMENTS_HEADER + "\n".join(runtime_requirements(repo)) + "\n",
                                          encoding="utf-8")
    shutil.copy2(repo / "spaces" / "README.md", out / "README.md")
    (out / ".gitattributes").write_text(GITATTRIBUTES, encoding="utf-8")

    files = sorted(str(p.relative_to(out)) for p in out.rglob("*")
                   if p.is_file() and ".git" not in p.relative_to(out).parts[:1])
    return BuildReport(
        out_dir=str(out), files=files, total_bytes=sum((out / f).stat().st_size for f in files),
        excluded={"playground/assets/corpus": EXCLUDED["assets/corpus"], "__pycache__/": EXCLUDED["__pycache__"],
                  "tests/, test requirements": "tests and test tools: not needed to serve"},
    )


def _ignore(package: Path):
    corpus = (package / "assets" / "corpus").resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo")) or n.startswith(".tmp-")}
        skip |= {n for n in names if (Path(folder) / n).resolve() == corpus}
        return skip

    return ignore


def runtime_requirements(repo: Path = REPO) -> list[str]:
    """The requirement lines of the repository's requirements.txt (comments dropped)."""
    lines = (repo / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def main(argv: list[str] | None = None) -> int:
    from playground.inputs import UserError

    parser = argparse.ArgumentParser(prog="python -m playground.space", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="assemble a deployable Space folder")
    b.add_argument("out_dir", help="a new or empty folder, or a clone of the Space's repository")
    sub.add_parser("settings", help="print the Space detection and caps for this environment")
    args = parser.parse_args(argv)
    if args.cmd == "settings":
        for k, v in space_settings().to_dict().items():
            print(f"{k}: {v}")
        return 0
    try:
        report = build(args.out_dir)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"Built {report.out_dir}: {len(report.files)} files, {report.total_bytes / 2**20:.1f} MiB")
    for what, why in report.excluded.items():
        print(f"  left out {what}: {why}")
    print("Deploy: hf upload <user>/<space> " + report.out_dir + " . --repo-type=space "
          "(or commit the folder to the Space's git repository with Git LFS)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
