"""Every mistake the lab runs, by family: one module per family, each scenario with its own words.

Adding a scenario touches its family's module (its function, its words in both languages, which
its decorator registers as `scenario.<id>.*` i18n keys, its before/after code, its two complete
scripts, its expected outcome on each kind of device target), listed in that module's SCENARIOS,
and the lesson map (docs/lesson-map.md). Each carries a `group` (harness.GROUPS): device, dtype,
meta, checkpoint, silent, training, offload.
"""

from __future__ import annotations

from playground.core.errors import UserError, shown
from playground.core.i18n import t
from playground.lab import target
from playground.lab.harness import Scenario
from playground.lab.scenarios import (calls, checkpoints, devices, dtype_devices, dtype_values, dtypes, meta, offload,
                                      silent, training, training_data, training_state)

SCENARIOS: dict[str, Scenario] = {
    s.id: s for s in sorted((*devices.SCENARIOS, *calls.SCENARIOS, *dtypes.SCENARIOS, *meta.SCENARIOS,
                             *checkpoints.SCENARIOS, *silent.SCENARIOS, *training.SCENARIOS, *training_state.SCENARIOS,
                             *training_data.SCENARIOS, *offload.SCENARIOS, *dtype_values.SCENARIOS,
                             *dtype_devices.SCENARIOS), key=lambda s: s.number)
}


def listing() -> list[dict]:
    """The lab's mistakes, in order: id, titles, whether a GPU is involved and whether it is simulated here."""
    return [{"id": s.id, "number": s.number, "title_en": t(s.title, "en"), "title_zh": t(s.title, "zh"), "group": s.group,
             "needs_gpu": s.needs_gpu, "silent": s.silent,
             "simulated_here": s.needs_gpu and target.for_scenario(s).simulated}
            for s in SCENARIOS.values()]


def get(scenario_id: object) -> Scenario:
    """The scenario a visitor named, or a UserError listing them (the edge's one check)."""
    sc = SCENARIOS.get(scenario_id.strip()) if isinstance(scenario_id, str) else None
    if sc is None:
        raise UserError.of("err.mistake", got=shown(scenario_id, 60), known=", ".join(SCENARIOS))
    return sc
