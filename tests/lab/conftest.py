"""The lab's live results: every scenario run once per device target, on the model the loader loaded."""

from __future__ import annotations

import pytest

from playground.lab import harness, scenarios
from playground.lab.target import Target

_RESULTS: dict[Target, Results] = {}


class Results(dict):
    """Each scenario's result on one target. A scenario whose run raised holds its exception, raised again where a
    test reads that scenario, naming it: one scenario that crashes (a GPU that behaves otherwise) fails its own
    tests and leaves the target's other scenarios to theirs."""

    def __getitem__(self, sid: str):
        value = super().__getitem__(sid)
        if isinstance(value, Exception):
            raise AssertionError(f"scenario {sid} did not run to a result: {type(value).__name__}: {value}") from value
        return value

    def values(self):
        return [self[sid] for sid in self]

    def items(self):
        return [(sid, self[sid]) for sid in self]


def _run_one(sc, lm, t: Target):
    try:
        return harness.run(sc, lm.model, lm.tokenizer, target=t)
    except Exception as e:  # kept, and raised where a test reads this scenario (Results)
        return e


def results_on(t: Target, lm) -> Results:
    """Every scenario's result with its GPU side on `t` (or the simulated stand-in the scenario needs there),
    run on the loaded model `lm` as the page runs it; once per target for the session."""
    if t not in _RESULTS:
        _RESULTS[t] = Results({sid: _run_one(sc, lm, t) for sid, sc in scenarios.SCENARIOS.items()})
    return _RESULTS[t]


@pytest.fixture
def results(device_target, bundled) -> Results:
    return results_on(device_target, bundled)
