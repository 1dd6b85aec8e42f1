"""The estimate panel under Load (issue 27's walk): an estimate made for another selection says so, a refused load
has one need figure and no context that fits, and a model no dtype can ever load here is marked in the lists."""

from __future__ import annotations

import re
import uuid
from types import SimpleNamespace

import pytest

from playground.hw import memory
from playground.load import catalog, estimate
from playground.web import handlers_memory as hm, model_lists as h

CJK = re.compile(r"[\u4e00-\u9fff]")
LLAMA = "synthetic/llama-7b"


@pytest.fixture
def request_():
    return SimpleNamespace(session_hash="test-estimate-" + uuid.uuid4().hex[:8])


def test_an_estimate_for_another_selection_says_so_until_the_selection_is_back(request_):
    """The walk saw a "would be refused" estimate for another model stay under Load after the selection changed."""
    md, kept = hm.ui_estimate("shakespeare-gpt2", "cpu", "float32", 256, 1, "en", request_)
    assert "Not the selection now" not in md
    for lang, words in (("en", "Not the selection now"), ("zh", "这不是当前的选择")):
        md2, kept2 = hm.ui_estimate_follows(kept, LLAMA, "cpu", "float32", 256, 1, lang)
        assert words in md2 and "`shakespeare-gpt2`" in md2 and kept2[3] is True
    assert md2.endswith(hm.views.estimate_fit_markdown(kept, "zh"))  # the estimate itself stays, under the line
    still = hm.ui_estimate_follows(kept2, "shakespeare-gpt2", "cpu", "float32", 256, 2, "en")  # another one still
    assert all(u == {"__type__": "update"} for u in still)  # nothing to change: it says so already
    back, kept4 = hm.ui_estimate_follows(kept2, "shakespeare-gpt2", "cpu", "float32", 256, 1, "en")
    assert back == md and kept4[3] is False  # the selection is back: the line goes


def test_a_refused_load_has_one_need_and_no_context_that_fits(request_, monkeypatch):
    """The walk read "no" beside "largest context that fits: 4096", and "needs 29.3 GiB" above "needs 12.3 GiB", for
    one model (llama-7b in bfloat16, whose float32 build does not fit): the table says the refusal's need and no
    context. The refusal is made certain here by a RAM of 1 GiB, whatever this machine has."""
    monkeypatch.setattr(memory, "available_bytes", lambda: 2**30)
    md, _ = hm.ui_estimate(LLAMA, "cpu", "bfloat16", 256, 1, "en", request_)
    assert md.startswith("**Would be refused**")
    need = re.search(r"needs ([\d.]+ GiB)", md).group(1)
    table = md[md.index("Will it fit"):]
    row = {cells[0].strip("* "): cells[1] for cells in
           (line.strip("|").split("|") for line in table.splitlines() if line.startswith("|"))}
    assert need in row["needs"] and "to load it at all" in row["needs"]
    assert re.findall(r"[\d.]+ GiB", row["needs"]) == [need]  # one figure
    assert "no" in row["fits?"] and not re.search(r"\d", row["largest context that fits"])


def test_a_model_no_dtype_can_load_here_is_marked_in_the_lists_with_its_numbers(monkeypatch):
    """synthetic/llama-7b stayed in the list, unmarked, where its float32 build (29.3 GiB) can never fit: marked
    beside its name with both numbers; on a machine with the RAM for it, it is not. RAM stubbed both ways."""
    h.out_of_reach.cache_clear()
    cfg = catalog.read_config(catalog.resolve(LLAMA))
    build = int(estimate.meta_facts(cfg.config, estimate.torch.float32).total * (1 + estimate.MARGIN))
    try:
        monkeypatch.setattr(memory, "total_bytes", lambda: build - 1)
        for lang, words in (("en", "never loads here"), ("zh", "永远加载不了")):
            labels = dict((i, label) for label, i in h.model_choices(lang))
            assert words in labels[LLAMA]
            assert estimate.fmt_bytes(build) in labels[LLAMA] and estimate.fmt_bytes(build - 1) in labels[LLAMA]
            assert not any(words in labels[i] for i in labels if i != LLAMA)
        h.out_of_reach.cache_clear()
        monkeypatch.setattr(memory, "total_bytes", lambda: 2**40)
        assert not any("never" in label for label, _ in h.model_choices("en"))
    finally:
        h.out_of_reach.cache_clear()
