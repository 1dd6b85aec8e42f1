"""The prepared GPU run's break-it step (`playground.tools.gpurun`), apart from the others: only its process
imports the lab's scenarios, which take seconds to import.

`break_it(device)` runs every scenario with its GPU side on the page's target, each caught on its own, and says
what each raised, where, whether for real, and whether that is what its data expects on this GPU.
"""

from __future__ import annotations

import time

from playground.core.i18n import as_text
from playground.lab import harness, scenarios, target


def break_it(device: str) -> dict:
    """Every break-it scenario with its GPU side on this GPU (the page's target), each caught on its own: what it
    raised, whether for real or simulated (a two-GPU mistake on one GPU), whether that is what its data expects,
    and whether its fix ran as written (what it raised where it did not)."""
    page = target.page()
    rows = []
    for sid, sc in scenarios.SCENARIOS.items():
        t0 = time.perf_counter()
        try:
            r = harness.run(sc, target=page)
        except Exception as e:  # one scenario's crash is its own row
            rows.append(dict(id=sid, crashed=f"{type(e).__name__}: {e}"[:500], seconds=time.perf_counter() - t0))
            continue
        on = target.for_scenario(sc, page)
        expected = sc.expected(on.kind)
        problems = expected.problems(r.raised, r.error_type, r.error_bases, r.error_message, r.warnings) if expected else []
        rows.append(dict(id=sid, ran_on=r.device, simulated=r.simulated, raised=r.raised,
                         raised_for_real=bool(r.raised and not r.simulated and r.device.startswith("cuda")), error_type=r.error_type,
                         message=(r.error_message or "").splitlines()[0][:300] if r.error_message else None,
                         warnings=len(r.warnings), cannot_run=as_text(r.cannot_run), as_expected=not problems,
                         problems=problems, fix_ok=r.fix_ok, notes=[n.text("en") for n in r.notes],
                         measured=as_text(r.measured), seconds=r.seconds))
        if not r.fix_ok:  # what the fix raised and printed: the next GPU session reads it from the JSON
            rows[-1].update(fix_error=r.fix_error[:1000], fix_output=r.fix_output[-1000:])
    return dict(target=str(page), scenarios=rows,
                raised_for_real=[r["id"] for r in rows if r.get("raised_for_real")],
                simulated=[r["id"] for r in rows if r.get("simulated")],
                not_as_expected=[r["id"] for r in rows if r.get("crashed") or not r.get("as_expected", True)],
                fix_failed=[r["id"] for r in rows if "fix_ok" in r and not r["fix_ok"]])
