"""The fact-check: claims quoted from the tutorials, decided now by experiments, verdicts following the evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from playground.core.errors import UserError
from playground.core.i18n import t
from playground.lab import factcheck
from playground.lab.factcheck import render
from playground.lab.factcheck.claim import VERDICTS

CJK = re.compile(r"[\u4e00-\u9fff]")
SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


@pytest.fixture(scope="module")
def results():
    return {r.id: r for r in factcheck.check_all()}


def test_at_least_ten_claims_with_their_words_and_sources():
    assert len(factcheck.CLAIMS) >= 10
    for c in factcheck.CLAIMS.values():
        assert t(c.claim, "en") and t(c.claim, "zh") and c.source.startswith(("T1", "T2", "T3", "T4", "T5")), c.id


def test_the_chinese_claims_are_quoted_from_the_tutorials():
    if not SEEDS.is_dir():
        pytest.skip(f"the tutorials are not on this machine ({SEEDS})")
    flat = " ".join(re.sub(r"\s+", " ", p.read_text(encoding="utf-8")) for p in SEEDS.glob("*.txt"))
    flat = flat.replace("**", "").replace("`", "")
    for c in factcheck.CLAIMS.values():
        # the quote (a table row's cells, a line of code), or else the Chinese claim, which is the tutorial's
        # sentence: every piece is the tutorial's (a sentence's clauses may be joined by "；" or "，")
        pieces = c.quote if isinstance(c.quote, tuple) else re.split(r"；|，", c.quote or t(c.claim, "zh"))
        for piece in pieces:
            if piece.strip():
                assert piece.strip().replace("`", "") in flat, (c.id, piece)


def test_code_in_a_claim_or_its_evidence_shows_as_written():
    """The evidence quotes a GPU kernel's check in a code span: escaped as HTML first, it showed
    `srcIndex &lt; srcSelectDimSize`. Outside code, a library's `<...>` is still escaped."""
    from tests.lab.test_render import entities_in_code

    r = factcheck.check(factcheck.get("device-side-assert-is-device-index"))
    for lang in ("en", "zh"):
        md = render.many([r], lang)
        assert "`srcIndex < srcSelectDimSize`" in md and entities_in_code(md) == [], entities_in_code(md)
    every = [factcheck.check(c) for c in factcheck.CLAIMS.values() if c.id != "cpu-tokens-per-second"]  # 4 s
    assert entities_in_code(render.many(every, "en") + render.many(every, "zh")) == []


def test_a_claim_is_said_as_a_sentence_in_both_languages_and_quoted_as_printed():
    """A claim quoted as a table row or a line of code is said as a sentence in Chinese too (the zh page once
    showed `torch.backends.cuda.synchronize()` alone, without what it was claimed to do), and the English page
    shows the row as a table, not as a raw `a | b | c` line."""
    for c in factcheck.CLAIMS.values():
        zh = t(c.claim, "zh")
        assert " | " not in zh and not zh.startswith("|"), c.id
        if c.quote:
            assert zh != c.quote and CJK.search(zh) and len(zh) > 12, c.id
    sync = factcheck.check(factcheck.get("backends-cuda-synchronize"))
    assert "等待 GPU" in render.one(sync, "zh") and "`torch.backends.cuda.synchronize()`" in render.one(sync, "zh")
    row = factcheck.check(factcheck.get("state-dict-keeps-no-device"))
    en = render.many([row], "en")
    assert "<td>不保留设备</td>" in en and " | 不保留设备 | " not in en
    assert "torch.save(state_dict) keeps no device information" in en.split("####")[0]  # the summary, in English


@pytest.mark.slow
def test_verdicts_evidence_and_liveness(results):
    assert sum(r.live for r in results.values()) >= 7
    for r in results.values():
        assert r.verdict in VERDICTS
        assert r.evidence.text("en") and CJK.search(r.evidence.text("zh")), r.id
        assert r.live == (r.verdict != "not measurable here"), r.id  # what cannot be measured here is not live
    wrong = [r.id for r in results.values() if r.verdict == "false"]
    assert len(wrong) >= 4, wrong
    for known in ("backends-cuda-synchronize", "eval-saves-memory", "to-verifies-parameters",
                  "state-dict-keeps-no-device", "device-side-assert-is-device-index"):
        assert results[known].verdict == "false", results[known].evidence.text()


@pytest.mark.slow
def test_the_speed_verdict_follows_the_measured_rate(results):
    r = results["cpu-tokens-per-second"]
    assert r.fields["new"] == 24 and r.fields["seconds"] > 0
    assert r.verdict == ("false" if r.fields["rate"] > 5 else "true")
    assert f"{r.fields['rate']} tokens/s" in r.evidence.text() and str(r.fields["new"]) in r.evidence.text()


@pytest.mark.slow
def test_markdown_in_both_languages(results):
    rows = list(results.values())
    en, zh = render.many(rows, "en"), render.many(rows, "zh")
    assert "not measurable here" in en and "false" in en and "Evidence" in en
    assert "这里无法测量" in zh and "证据" in zh and "错误" in zh
    d = rows[0].to_dict()  # the API's dict: both languages, from the same keys the page says
    assert d["claim_zh"] in zh and d["claim_en"] in en and d["evidence_zh"] in zh and d["evidence_en"] in en


def test_an_unknown_claim_lists_the_valid_ones():
    with pytest.raises(UserError) as e:
        factcheck.get("no-such-claim")
    assert "backends-cuda-synchronize" in str(e.value)
    for bad in (None, 42, "", "../etc"):
        with pytest.raises(UserError):
            factcheck.get(bad)


def test_one_claim_checks_quickly_and_says_it_live():
    r = factcheck.check(factcheck.get("backends-cuda-synchronize"))
    assert r.verdict == "false" and r.live and "AttributeError" in r.to_dict()["evidence_en"] and r.seconds < 5


@pytest.mark.parametrize("pinned_gbps, verdict", [(24.0, "true"), (9.0, "false")])
def test_pinned_memory_is_timed_on_a_cuda_target_and_the_verdict_follows_the_rates(monkeypatch, pinned_gbps, verdict):
    """On a host whose page target is a CUDA GPU (made so here), the claim is decided by two measured copies;
    the copies themselves (hw.bandwidth.h2d) need the GPU, so their readings are given."""
    from playground.hw import bandwidth
    from playground.lab import target

    monkeypatch.setattr(target, "page", lambda host=None: target.Target("cuda:0"))
    asked = []

    def h2d(device, pinned):
        asked.append((device, pinned))
        gbps = pinned_gbps if pinned else 12.0
        return bandwidth.Bandwidth("H2D", 64 * 2**20, 64 * 2**20 / gbps / 1e9, gbps, 5)

    monkeypatch.setattr(bandwidth, "h2d", h2d)
    r = factcheck.check(factcheck.get("pin-memory-speeds-copies"))
    assert asked == [("cuda:0", True), ("cuda:0", False)]
    assert r.verdict == verdict and r.live
    en, zh = r.evidence.text("en"), r.evidence.text("zh")
    assert f"{pinned_gbps} GB/s from pinned memory" in en and "12.0 GB/s from ordinary memory" in en
    assert "cuda:0" in zh and CJK.search(zh)


def test_pinned_memory_is_not_measured_without_a_cuda_target(monkeypatch):
    from playground.lab import target

    for page in (target.SIMULATED, target.Target("mps")):
        monkeypatch.setattr(target, "page", lambda host=None, page=page: page)
        r = factcheck.check(factcheck.get("pin-memory-speeds-copies"))
        assert r.verdict == "not measurable here" and not r.live and "has none" in r.evidence.text("en")


@pytest.mark.slow  # every claim checked live (`results`): seconds
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_evidence_not_measurable_here_says_so_once(results, lang):
    """The evidence line's label already says "not measurable here": the evidence itself does not repeat it."""
    unmeasured = [r for r in results.values() if not r.live]
    assert unmeasured
    said = t("fact.verdict.not_measurable_here", lang).lower()
    for r in unmeasured:
        line = next(x for x in render.one(r, lang).splitlines() if x.startswith(t("fact.evidence_line", lang, live="", evidence="")[:6]))
        assert line.lower().count(said) == 1, line
