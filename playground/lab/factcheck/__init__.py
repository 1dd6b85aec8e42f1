"""The fact-check: claims quoted from the five tutorials, each decided by evidence produced now.

A `Claim` (made by the `@claim(...)` decorator on its check) carries the tutorial's own words (its
`claim` key: the Chinese quoted as printed, the English our translation), where it was said, the
sentence its evidence is said in, and a `check()` that runs the experiment that decides it, here, in
this process: it returns the verdict (`true`, `false`, `partly`, or `not measurable here`), the
evidence's measured fields, and whether that evidence was produced live. A verdict is computed from the evidence in the check's code, never stored. Claims
that only a GPU can decide say what a GPU would show and are `not measurable here`, not live.

One module per group of claims (`devices`, `training`, `speed`); `CLAIMS` lists them all, `get(id)`
is the edge's one check of a visitor's id.
"""

from __future__ import annotations

from playground.core.errors import UserError, shown
from playground.lab.factcheck import devices, speed, training
from playground.lab.factcheck.claim import Claim, FactResult, check

CLAIMS: dict[str, Claim] = {c.id: c for c in (*devices.CLAIMS, *training.CLAIMS, *speed.CLAIMS)}


def get(claim_id: object) -> Claim:
    """The claim a visitor named, or a UserError listing them (the edge's one check)."""
    c = CLAIMS.get(claim_id.strip()) if isinstance(claim_id, str) else None
    if c is None:
        raise UserError.of("err.claim", got=shown(claim_id, 60), known=", ".join(CLAIMS))
    return c


def check_all() -> list[FactResult]:
    """Every claim, decided now, in order."""
    return [check(c) for c in CLAIMS.values()]
