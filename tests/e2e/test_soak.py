"""The soak command (playground.soak): its arithmetic and its checks, with known answers.

The command itself runs end to end in tests/test_concurrency.py:
`python -m playground.soak --minutes 2 --clients 8`, starting its own server as the
docs/reliability.md's 10-minute run does, printing one JSON line that the test reads.
"""

from __future__ import annotations

import pytest

from playground.tools import soak, soak_checks
from playground.tools.server import log_exceptions

LOG = """\
* Running on local URL:  http://127.0.0.1:7860
Traceback (most recent call last):
  File "/x/queueing.py", line 870, in process_events
    response = await route_utils.call_process_api(
RuntimeError: cannot release un-acquired lock
Loading weights: 100%
Exception ignored in: <generator object ModelSlot.generate at 0x7f>
Traceback (most recent call last):
  File "/x/slot.py", line 93, in generate

ValueError: boom
"""


def test_percentile_and_slope_have_known_answers():
    assert soak_checks.percentile([], 50) is None
    assert soak_checks.percentile([3.0], 95) == 3.0
    assert soak_checks.percentile([1, 2, 3, 4], 50) == 2.5
    assert soak_checks.percentile(list(range(101)), 95) == 95
    assert soak_checks.slope([(0, 1), (1, 3), (2, 5), (3, 7)]) == pytest.approx(2.0)
    assert soak_checks.slope([(0, 5), (1, 5), (2, 5)]) == 0
    assert soak_checks.slope([(0, 1)]) is None


def test_log_exceptions_finds_each_traceback_and_its_last_line():
    assert log_exceptions(LOG) == ["RuntimeError: cannot release un-acquired lock", "ValueError: boom"]
    assert log_exceptions("* Running on local URL\nLoading weights: 100%\n") == []


def test_prompts_are_distinct_and_grow_in_length():
    prompts = [soak.prompt_for(i) for i in range(40)]
    assert len(set(prompts)) == 40
    words = [len(p.split()) for p in prompts]
    assert words == sorted(words) and len(set(words)) == 40


def test_the_book_flags_crosstalk():
    book = soak_checks.Book()
    assert book.check("m", "float32", "A", "text a", 5) == ""
    assert book.check("m", "float32", "B", "text b", 9) == ""
    assert book.check("m", "float32", "A", "text a", 5) == ""  # the same again: consistent
    assert "differs" in book.check("m", "float32", "A", "text b", 5)  # B's text delivered to A
    assert "another client's" in book.check("m", "float32", "A", "text a", 9)  # B's prompt processed for A
    assert book.check("m", "bfloat16", "A", "other text", 5) == ""  # another dtype has its own reference
    summary = book.summary()
    assert summary["keys"] == 3 and summary["prompt_tokens_distinct"]
    assert summary["distinct_texts"] == {"m/bfloat16": 1, "m/float32": 2}


def test_busy_answers_are_told_apart_from_failures():
    s = soak.Soak("http://127.0.0.1:1/", 0.1, 1, pid=0)
    s._fail("generate", "QueueError: Queue is full! Please try again.")
    s._fail("generate", RuntimeError("boom"))
    assert (s.tally.busy, s.tally.failures) == (1, 1) and s.tally.samples == ["generate: RuntimeError: boom"]
    s._fail("generate", "AppError: Your model, m (cpu, float32), was unloaded at 12:00:01 to make room for "
                        "another visitor's; nothing ran on another model in its place.")
    assert (s.tally.busy, s.tally.failures, s.tally.evicted) == (1, 1, 1)
    ok = dict(failures=0, crosstalk=0, warmup_failures=0, alive_after=True, server_exceptions=0, swapped=0,
              evictions=3, evictions_told=2, evictions_dropped=1, evictions_pending=0, evicted_seen=2,
              floor_seconds=[4.0, 5.0])
    assert soak.verdict(ok)
    for bad in (dict(failures=1), dict(crosstalk=1), dict(alive_after=False), dict(server_exceptions=2),
                dict(swapped=1), dict(evicted_seen=1), dict(evictions=4), dict(floor_seconds=[4.0, None])):
        assert not soak.verdict({**ok, **bad}), bad
