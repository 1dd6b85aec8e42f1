"""A module's docstring states its contract in a few lines; the long explanations live in docs/.

Checked over the package's source (nothing is imported): no module docstring longer than 15 lines;
every `docs/<name>.md` the source names (in a docstring or a comment) exists; every relative link in
docs/*.md and README.md points at a file that exists. The second half feeds each check a few lines written
to break it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.package_source import Sources, read

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "playground"
DOCS = ROOT / "docs"
MAX_DOCSTRING_LINES = 15
DOC_PATH = re.compile(r"\bdocs/[\w./-]*?\.md\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # [text](target)


def long_docstrings(sources: Sources, limit: int = MAX_DOCSTRING_LINES) -> list[str]:
    """Every module whose docstring takes more than `limit` lines of source, quotes included."""
    found = []
    for file, text in sources.items():
        body = ast.parse(text).body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            n = body[0].end_lineno - body[0].lineno + 1
            if n > limit:
                found.append(f"{file}: its docstring is {n} lines (at most {limit}): keep the contract, "
                             "move the explanation to docs/")
    return found


def missing_docs(sources: Sources, root: Path = ROOT) -> list[str]:
    """Every docs/<name>.md the source mentions that is not in the repository."""
    return [f"{file}:{n}: names {path}, which does not exist"
            for file, text in sources.items()
            for n, line in enumerate(text.splitlines(), 1)
            for path in DOC_PATH.findall(line) if not (root / path).is_file()]


def broken_links(docs: dict[Path, str]) -> list[str]:
    """Every relative link in the docs whose file does not exist (anchors and web addresses aside)."""
    found = []
    for doc, text in docs.items():
        for target in LINK.findall(text):
            path = target.split("#", 1)[0]
            if path and "://" not in path and not path.startswith("mailto:") and not (doc.parent / path).exists():
                found.append(f"{doc.name}: links to {target}, which does not exist")
    return found


def test_no_module_docstring_over_15_lines():
    assert long_docstrings(read(PACKAGE)) == []


def test_every_docs_page_the_package_names_exists():
    assert missing_docs(read(PACKAGE)) == []


def test_every_relative_link_in_docs_and_the_readme_points_at_a_file():
    docs = {p: p.read_text(encoding="utf-8") for p in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]}
    assert broken_links(docs) == []


# ---------------------------------------------------------------- each check, fed what it is for

def test_a_16_line_docstring_is_reported_and_15_is_not():
    doc = lambda n: '"""' + "\n".join(f"line {i}" for i in range(n - 1)) + '\n"""\nx = 1\n'
    found = long_docstrings({"playground/a.py": doc(16), "playground/b.py": doc(15),
                             "playground/c.py": "x = 1\n", "playground/d.py": ""})
    assert found == ["playground/a.py: its docstring is 16 lines (at most 15): keep the contract, "
                     "move the explanation to docs/"]


def test_a_docs_page_that_does_not_exist_is_reported(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "there.md").write_text("# there\n")
    src = '"""Why: docs/there.md, and docs/gone.md."""\n# see docs/also-gone.md\n'
    assert missing_docs({"playground/a.py": src}, tmp_path) == [
        "playground/a.py:1: names docs/gone.md, which does not exist",
        "playground/a.py:2: names docs/also-gone.md, which does not exist"]


def test_a_broken_relative_link_is_reported(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "real.py").write_text("")
    doc = tmp_path / "docs" / "a.md"
    text = ("[ok](../real.py) [anchor](../real.py#x) [web](https://example.org/x) [self](#top)\n"
            "[gone](../gone.py) [gone too](other.md#y)\n")
    assert broken_links({doc: text}) == ["a.md: links to ../gone.py, which does not exist",
                                         "a.md: links to other.md#y, which does not exist"]
