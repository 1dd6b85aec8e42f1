"""Building the Hugging Face Space: `python -m playground.space build OUT_DIR`, and `settings`.

A Space is a git repository that Hugging Face runs: the front matter of its
README.md says how (`sdk: gradio`, the Gradio `sdk_version`, `app_file`, the
suggested hardware) and `requirements.txt` at its root is installed on top. The
build assembles exactly that from this repository: app.py, the package with the
bundled model, the runtime requirements, and spaces/README.md as README.md. The
limits a shared Space applies are settings (`playground.core.settings`);
`settings` prints them with their reasons.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from playground.core import settings
from playground.core.errors import UserError
from playground.core.paths import REPO
from playground.hw import zerogpu
from playground.load import synthetic

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


def space_settings(env: dict | None = None) -> dict:
    """Whether this is a Space, and the caps that follow, each with its reason."""
    s = settings.read(env)
    top, names, why = synthetic.allowed(s)
    return dict(on_space=s.on_space, space_id=s.space_id, zero_gpu=zerogpu.active(),
                max_new_tokens=s.max_new_tokens, max_new_tokens_reason=s.max_new_tokens_reason,
                synthetic_max=top, synthetic_allowed=names, synthetic_reason=why)


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
    parser = argparse.ArgumentParser(prog="python -m playground.space", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="assemble a deployable Space folder")
    b.add_argument("out_dir", help="a new or empty folder, or a clone of the Space's repository")
    sub.add_parser("settings", help="print the Space detection and caps for this environment")
    args = parser.parse_args(argv)
    if args.cmd == "settings":
        try:
            found = space_settings()
        except settings.Malformed as e:  # the same one line `python app.py` would refuse to start with
            print(settings.refusal(e, "python -m playground.space"), file=sys.stderr)
            return 2
        for k, v in found.items():
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
