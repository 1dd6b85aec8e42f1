"""The lab's live results: every scenario run once per device target, on the model the loader loaded."""

from __future__ import annotations

import pytest

from playground.lab import harness, scenarios
from playground.lab.target import Target

_RESULTS: dict[Target, dict] = {}


def results_on(t: Target, lm) -> dict:
    """Every scenario's result with its GPU side on `t` (or the simulated stand-in the scenario needs there),
    run on the loaded model `lm` as the page runs it; once per target for the session."""
    if t not in _RESULTS:
        _RESULTS[t] = {sid: harness.run(sc, lm.model, lm.tokenizer, target=t) for sid, sc in scenarios.SCENARIOS.items()}
    return _RESULTS[t]


@pytest.fixture
def results(device_target, bundled) -> dict:
    return results_on(device_target, bundled)
