"""Every scenario's two complete scripts, broken and fixed, and running a script's body in this process.

A script is what a learner copies: it runs as written with `python` from the repository
root, on any machine, because it chooses its device the way the tutorials recommend
(`device = "cuda" if torch.cuda.is_available() else "cpu"`) and loads the bundled model
by its path. It is put together from parts, in this order:

    HEAD    imports; `path`, `device`, `tokenizer`, `model` (the bundled model, loaded)
    DATA    the prompt, or a batch of Shakespeare for a training step
    setup   what the scenario needs first (a checkpoint written as a GPU machine writes it)
    body    the scenario: the mistake (broken) or the fix

The lab runs the fix the page shows: `run(text, names)` executes the script's own text
in this process, with the lines that load the model and the tokenizer, and the
scenario's setup lines, blanked out (so line numbers in a traceback are the script's),
and the names those lines define handed in by the lab instead: a private copy of the
model the lab works on, its tokenizer, the same `device` expression's value. Doing it
in-process (rather than starting `python` on the file) keeps a run to a fraction of a
second instead of ~3 s of imports, and lets the lab work on the model a visitor loaded;
tests/lab/test_scenarios.py runs every script as a file, from the repository root.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from playground.core.inputs import DEFAULT_PROMPT

BUNDLED_PATH = "playground/assets/shakespeare-gpt2"  # relative to the repository root
TEXT = "Friends, Romans, countrymen, lend me your ears;\\nI come to bury Caesar, not to praise him."

IMPORTS = "import torch\nfrom torch import nn\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
DEVICE = 'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
LOAD = (f'path = "{BUNDLED_PATH}"   # the bundled model, from the repository root\n' + DEVICE
        + "tokenizer = AutoTokenizer.from_pretrained(path)\nmodel = AutoModelForCausalLM.from_pretrained(path)\n")
DATA = {
    "lm": f"prompt = {DEFAULT_PROMPT!r}\n",
    "train": (f'text = "{TEXT}"\n'
              "batch = tokenizer([text], return_tensors=\"pt\")   # a batch of Shakespeare, made on the CPU\n"
              "input_ids, labels = batch.input_ids, batch.input_ids.clone()\n"),
    "bare": "",
}
LOADED = ("path", "device", "tokenizer", "model")  # the names the blanked lines define: the lab hands them in


@dataclass(frozen=True)
class Script:
    """A scenario's scripts: `kind` picks the data ("lm": a prompt; "train": a batch; "bare": no model)."""

    kind: str
    broken: str
    fix: str
    imports: str = ""  # more imports, after the HEAD's
    setup: str = ""  # shown, run by `python`; in-process the lab provides what it defines
    helpers: str = ""  # functions the body uses (run in-process too)

    def text(self, which: str) -> str:
        """The complete script, `which` = "broken" or "fix"."""
        return "".join(part for part, _ in self.parts(which))

    def parts(self, which: str) -> list[tuple[str, bool]]:
        """(text, run in-process?) in order; the model-loading lines and the setup are the lab's to provide."""
        body = (self.broken if which == "broken" else self.fix).strip("\n") + "\n"
        more = self.imports.strip("\n") + "\n" if self.imports.strip() else ""
        setup = self.setup.strip("\n") + "\n" if self.setup.strip() else ""
        helpers = "\n" + self.helpers.strip("\n") + "\n\n\n" if self.helpers.strip() else ""
        if self.kind == "bare":
            return [("import torch\nfrom torch import nn\n" + more + "\n", True), (DEVICE, False),
                    (helpers or "\n", True), (setup, False), (body, True)]
        return [(IMPORTS + more + "\n", True), (LOAD, False), (DATA[self.kind] + helpers, True), (setup, False),
                (body, True)]

    def in_process(self, which: str) -> str:
        """The same text with the lab-provided lines blanked: line N here is line N of `text(which)`."""
        return "".join(part if run else "\n" * part.count("\n") for part, run in self.parts(which))


def device() -> str:
    """The value of the scripts' own `device` line on this machine: what a learner's copy computes."""
    ns = namespace({}, [])
    run("import torch\n" + DEVICE, ns, "<device line>")
    return ns["device"]


def data(kind: str, tokenizer) -> dict:
    """What a script's DATA lines define (the prompt, or the batch), run here as written."""
    ns = namespace({"tokenizer": tokenizer}, [])
    run(DATA[kind], ns, f"<{kind} data>")
    return ns


def namespace(names: dict, out: list[str]) -> dict:
    """The globals a script runs with in-process: `names`, and a `print` that writes to `out`."""
    def say(*args, sep=" ", end="\n", **_):
        out.append(sep.join(str(a) for a in args) + end)

    return {"__name__": "__main__", "__builtins__": __builtins__, **names, "print": say}


def run(code: str, ns: dict, filename: str) -> None:
    """Execute `code` in the globals `ns` (left as the script left them, even when it raises).

    The file name is registered with linecache, so a traceback through the script shows its lines.
    """
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), ns)  # our own scripts, never a visitor's text
