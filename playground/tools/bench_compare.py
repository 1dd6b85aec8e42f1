"""Does Compare's default agree with itself? The page's default matrix, run again and again, each ranking printed.

    python -m playground bench compare                  # 6 repeats: the bundled model, every pair, 16 tokens
    python -m playground bench compare --repeats 10 --tokens 32 --runs 5

Each repeat is what the Compare button runs with the page's defaults (`compare.run`: one warm-up and
`RUNS` timed greedy generations per pair, in the same order). Its ranking is what the page says under the
table (`compare.ranking`): neighbours fastest first, `>` where every timed run of the faster beat every run
of the slower, `?` where their spreads overlap ("cannot tell"). Printed: each repeat's ranking with its
median decode rates and the load average, how often each pair of dtypes was told apart, and the
contradictions, a pair told apart one way in one repeat and the other way in another (the figure the
default must keep at 0: a repeat may say less, never the opposite).
"""

from __future__ import annotations

import argparse
import os
from itertools import combinations

from playground.load import catalog
from playground.core.paths import BUNDLED_NAME
from playground.run import compare


def told(rows) -> list[tuple[str, str]]:
    """The neighbours the page tells apart, as (faster, slower): what it says under the table."""
    return [(a["pair"], b["pair"]) for a, b, apart in compare.ranking(rows) if apart]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m playground bench compare", description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--tokens", type=int, default=16, help="new tokens per generation (the page's default: 16)")
    ap.add_argument("--runs", type=int, default=compare.RUNS, help=f"timed runs per pair (the page's: {compare.RUNS})")
    ap.add_argument("--model", default=BUNDLED_NAME)
    a = ap.parse_args(argv)
    src = catalog.resolve(a.model)
    pairs = compare.parse_pairs(compare.available_pairs())
    seen: dict[tuple[str, str], list[str]] = {}
    met: set[tuple[str, str]] = set()  # neighbours in some repeat's ranking: the page compares neighbours only
    for k in range(a.repeats):
        rows = compare.run(src, pairs, a.tokens, runs=a.runs)
        chain = compare.ranking(rows)
        said = " ".join([f"{chain[0][0]['pair']} ({chain[0][0]['decode_tokens_per_s']:.0f})"] +
                        [f"{'>' if x else '?'} {b['pair']} ({b['decode_tokens_per_s']:.0f})" for _a, b, x in chain])
        print(f"repeat {k + 1}: {said}   load average {os.getloadavg()[0]:.2f}", flush=True)
        for a_, b_, _x in chain:
            met.add(tuple(sorted((a_["pair"], b_["pair"]))))
        for x, y in told(rows):
            seen.setdefault(tuple(sorted((x, y))), []).append(f"{x} > {y}")
    print(f"\n{a.repeats} repeats, {a.tokens} tokens, {a.runs} timed runs per pair:")
    contradictions = 0
    for p, q in combinations(sorted(r.pair for r in rows), 2):
        verdicts = seen.get((p, q), [])
        ways = set(verdicts)
        contradictions += len(ways) > 1
        if (p, q) not in met:
            print(f"  {p} vs {q}: never neighbours in a ranking (the page compares neighbours)")
            continue
        print(f"  {p} vs {q}: told apart in {len(verdicts)} of {a.repeats}"
              + (f" ({', '.join(sorted(ways))})" if ways else ""))
    print(f"contradictions (told apart both ways): {contradictions}")


if __name__ == "__main__":
    main()
