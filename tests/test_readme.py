"""The README as a front door: short, its file tree true, its links landing on a heading that exists.

Read as text (nothing is imported): README.md at most 250 lines; every module of the package is named in the
README's file tree (by its name, a pattern such as `handlers*.py`, or a folder given as a group) and every name
there exists; every `file.md#anchor` link in README.md and docs/*.md points at a heading of that file, as GitHub
makes anchors. The second half feeds each check a few lines written to break it.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from tests.test_docstrings import LINK

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 250
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$")


def tree_block(readme: str) -> str:
    """The fenced block under the README's "How the code is laid out"."""
    section = readme[readme.index("## How the code is laid out"):]
    parts = section.split("```\n", 2)
    assert len(parts) == 3, "the README's 'How the code is laid out' has no file tree in a ``` block"
    return parts[1]


def tree_names(block: str) -> tuple[set[str], set[str]]:
    """(files, folders) the tree names, as paths from the repository root. A line is its names, then two or more
    spaces, then what they are; indentation (two spaces a level) says which folder a name is in."""
    files, folders, stack = set(), set(), []
    for line in block.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        del stack[depth:]
        names = re.split(r"\s{2,}", line.strip())[0].split()
        for name in names:
            path = "/".join([*stack, name.rstrip("/")])
            (folders if name.endswith("/") else files).add(path)
        if len(names) == 1 and names[0].endswith("/"):
            stack.append(names[0].rstrip("/"))
    return files, folders


def tree_problems(block: str, root: Path = ROOT) -> list[str]:
    """Names in the tree that do not exist, and modules of the package the tree does not name."""
    files, folders = tree_names(block)
    found = [f"the tree names {f}, which does not exist" for f in sorted(files)
             if not any(root.glob(f))]
    found += [f"the tree names {d}/, which does not exist" for d in sorted(folders) if not (root / d).is_dir()]
    # a folder whose files the tree does not list one by one is a group: it covers every module in it
    groups = {d for d in folders if not any(f.startswith(d + "/") for f in files)}
    for module in sorted((root / "playground").rglob("*.py")):
        rel = module.relative_to(root).as_posix()
        if module.name == "__init__.py" or any(fnmatch.fnmatch(rel, f) for f in files):
            continue
        if not any(rel.startswith(g + "/") for g in groups):
            found.append(f"{rel} is not in the README's file tree")
    return found


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: link targets dropped, lower case, punctuation gone, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    found, seen, fenced = set(), {}, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            a = anchor(m.group(1))
            n = seen.get(a, 0)
            seen[a] = n + 1
            found.add(a if n == 0 else f"{a}-{n}")
    return found


def broken_anchors(docs: dict[Path, str]) -> list[str]:
    """Every link `file#anchor` (or `#anchor`) whose file has no heading with that anchor."""
    found = []
    for doc, text in docs.items():
        for target in LINK.findall(text):
            if "#" not in target or "://" in target:
                continue
            path, frag = target.split("#", 1)
            dest = (doc.parent / path) if path else doc
            if dest.suffix != ".md" or not dest.is_file():
                continue  # a missing file is test_docstrings' to report
            body = docs.get(dest.resolve()) or dest.read_text(encoding="utf-8")
            if frag not in anchors(body):
                found.append(f"{doc.name}: links to {target}, a heading {dest.name} does not have")
    return found


def all_docs() -> dict[Path, str]:
    return {p.resolve(): p.read_text(encoding="utf-8") for p in [*sorted((ROOT / "docs").glob("*.md")), README]}


def test_the_readme_is_at_most_250_lines():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"README.md is {n} lines: move the detail to docs/ and link to it"


def test_the_readmes_file_tree_names_every_module_and_nothing_else():
    assert tree_problems(tree_block(README.read_text(encoding="utf-8"))) == []


def test_every_anchor_link_in_docs_and_the_readme_lands_on_a_heading():
    assert broken_anchors(all_docs()) == []


# ---------------------------------------------------------------- each check, fed what it is for

def test_a_tree_missing_a_module_or_naming_a_gone_one_is_reported(tmp_path):
    for rel in ("playground/core/a.py", "playground/core/b.py", "playground/web/handlers.py",
                "playground/web/handlers_x.py", "playground/tools/cli.py", "playground/tools/x.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    block = ("playground/\n  core/\n    a.py gone.py    two names, one gone\n  web/\n    handlers*.py    a pattern\n"
             "  tools/                a group: every module in it\n")
    assert tree_problems(block, tmp_path) == ["the tree names playground/core/gone.py, which does not exist",
                                              "playground/core/b.py is not in the README's file tree"]


def test_github_anchors():
    assert anchor("The command line ([`tools/cli.py`](../playground/tools/cli.py))") == "the-command-line-toolsclipy"
    assert anchor("How many torch threads ([`hw/cpu_threads.py`](x))") == "how-many-torch-threads-hwcpu_threadspy"
    assert anchor("The page's own cost") == "the-pages-own-cost"
    assert anchor("中文说明") == "中文说明"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_a_link_to_a_missing_heading_is_reported(tmp_path):
    (tmp_path / "b.md").write_text("# B\n\n## Real heading\n")
    a = tmp_path / "a.md"
    text = "[ok](b.md#real-heading) [self](#top) [gone](b.md#no-such) [web](https://x.org/p#q)\n\n# Top\n"
    a.write_text(text)
    assert broken_anchors({a: text}) == ["a.md: links to b.md#no-such, a heading b.md does not have"]
