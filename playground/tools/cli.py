"""The command line: every measurement the page shows, without a browser.

    python -m playground report            # the bundled model, the best device, its recommended dtype
    python -m playground report --model shakespeare-gpt2 --device cpu --dtype bfloat16 --json
    python -m playground report --model synthetic/llama-42m --device cpu --dtype int8 --json
    python -m playground report --model synthetic/gpt2-small --limits cpu=200MB,disk
    python -m playground selfcheck --json  # the device tests, one verdict each
    python -m playground gpu-run out/h100  # the prepared run for a lent GPU machine (docs/gpu.md)
    python -m playground bench             # the benchmarks: parity (the default), engines, compare, page

It measures nothing itself: it prints the reports the shared slot returns. With `--json`, stdout
carries one JSON object only. Exit codes: 0 ok, 2 bad argument, 1 failed, 130 Ctrl-C. A command is
an entry in `COMMANDS`. See docs/serving.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from playground.core import settings
from playground.core.errors import UserError
from playground.core.inputs import DEFAULT_PROMPT, SAMPLED
from playground.core.paths import BUNDLED_NAME
from playground.hw import openmp
from playground.tools.console import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Parser, one_line,
                                      quiet_libraries, stdout_to_stderr)


@dataclass
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------- report

def _report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=BUNDLED_NAME,
                   help=f"bundled name ({BUNDLED_NAME}, the default), synthetic/..., a Hub id, or a local folder")
    p.add_argument("--device", default=None,
                   help="cpu, cuda, cuda:N, mps or auto (default: the best available: a GPU, then MPS, then the CPU)")
    p.add_argument("--dtype", default=None,
                   help="float32, float16, bfloat16, auto, or int8 / int4 (weights quantized by torchao after a "
                        "float32 load; docs/dtypes.md) (default: the one the device computes natively in 16 bits, "
                        "else float32)")
    p.add_argument("--prompt", default=DEFAULT_PROMPT, help=f"text to continue (default {DEFAULT_PROMPT!r})")
    p.add_argument("--max-new-tokens", default="64", help="token budget, 1 to PLAYGROUND_MAX_NEW_TOKENS (default 64)")
    p.add_argument("--temperature", default=str(SAMPLED["temperature"]),
                   help=f"above 0 samples (default {SAMPLED['temperature']}, as the page); 0 is greedy")
    p.add_argument("--top-p", default=str(SAMPLED["top_p"]),
                   help=f"nucleus sampling mass, used when temperature > 0 (default {SAMPLED['top_p']})")
    p.add_argument("--seed", default=str(SAMPLED["seed"]), help=f"sampling seed (default {SAMPLED['seed']})")
    p.add_argument("--limits", default=None,
                   help="memory limits per device for Accelerate's placement, e.g. 'cpu=200MB,disk' or "
                        "'cuda:0=2GB,cpu=8GB,disk' (loads with device_map='auto'; --device must be left out or auto); "
                        "the report then carries the placement map")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")


def _run_report_command(args: argparse.Namespace) -> int:
    # deferred (start-up): it imports torch and Transformers, which take seconds; a usage error (or --help)
    # answers at once.
    from playground.tools import report

    progress = None if args.json else (lambda frac, desc: print(f"[{frac:4.0%}] {desc}", file=sys.stderr))
    with stdout_to_stderr():
        result = report.run_report(args.model, args.device, args.dtype, prompt=args.prompt,
                            max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                            top_p=args.top_p, seed=args.seed, progress=progress, limits=args.limits)
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict()) + "\n")
    else:
        sys.stdout.write(report.format_report(result) + "\n")
    sys.stdout.flush()
    return EXIT_OK


# ---------------------------------------------------------------- selfcheck

def _selfcheck_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    p.add_argument("--device", default=None,
                   help="only this device's tests: cpu, cuda, cuda:N or mps (default: every device present)")


def _run_selfcheck_command(args: argparse.Namespace) -> int:
    # deferred (start-up): it imports torch and Transformers, which take seconds; a usage error (or --help)
    # answers at once.
    from playground.tools import selfcheck

    device = selfcheck.parse_device(args.device)
    with stdout_to_stderr():  # pytest's own progress and tracebacks go to stderr
        result = selfcheck.run(device)
    sys.stdout.write((json.dumps(result, default=str) if args.json else selfcheck.table(result)) + "\n")
    sys.stdout.flush()
    return EXIT_OK if result["ok"] else EXIT_FAILED


# ---------------------------------------------------------------- gpu-run

def _gpu_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out_dir", metavar="OUT_DIR", help="the folder every result is written to (made if absent)")
    p.add_argument("--budget", default="480", help="seconds for the whole run (default 480: 8 minutes)")
    p.add_argument("--only", default=None, help="run only these steps, comma-separated (default: every step)")
    p.add_argument("--keep", action="store_true", help="keep the synthetic checkpoint built under OUT_DIR/work")
    p.add_argument("--step", default=None, help=argparse.SUPPRESS)  # one step, in the process the run starts for it


def _run_gpu_run_command(args: argparse.Namespace) -> int:
    # deferred (start-up): it imports torch and the playground's layers, which take seconds; a usage error (or
    # --help) answers at once.
    from playground.tools import gpurun

    names = [s.name for s in gpurun.STEPS]
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    if only and set(only) - set(names):
        raise UserError(f"--only takes steps among {', '.join(names)}; got {', '.join(sorted(set(only) - set(names)))}")
    try:
        budget = float(args.budget)
    except ValueError:
        budget = -1.0
    if not 30 <= budget <= 3600:
        raise UserError(f"--budget must be a number of seconds from 30 to 3600; got {args.budget!r}")
    out = Path(args.out_dir)
    if args.step is not None:
        if args.step not in names:
            raise UserError(f"--step must be one of {', '.join(names)}")
        return gpurun.child(args.step, out)
    with stdout_to_stderr():
        doc = gpurun.run(out, budget, only, args.keep, log=lambda line: print(line, file=sys.stderr, flush=True))
    sys.stdout.write(json.dumps(doc, default=str) + "\n")
    sys.stdout.flush()
    return EXIT_OK if doc["ok"] else EXIT_FAILED


# ---------------------------------------------------------------- bench

# Each bench, by its subcommand: what it runs. `python -m playground bench` alone is `parity`, which is also
# `python -m playground.bench` (the gate the developers' guide names).
BENCHES = {
    "parity": "the playground's own path against bare Transformers, run by run: decode, TTFT, load, RSS, cold start "
              "(the gate)",
    "engines": "the compiled static-cache engine against generate() and the manual loop, beside the bandwidth bound",
    "compare": "Compare's default matrix again and again: does its ranking ever contradict itself?",
    "page": "a Generate's decode rate in Chromium against the API's, one server (the page's own cost)",
}


def _bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("which", nargs="?", default="parity", choices=list(BENCHES), metavar="BENCH",
                   help="; ".join(f"{k}: {v}" for k, v in BENCHES.items()) + " (default: parity)")
    p.add_argument("options", nargs=argparse.REMAINDER, help="that bench's own options (see: ... bench BENCH --help)")


def _run_bench_command(args: argparse.Namespace) -> int:
    # deferred (start-up): the benches import torch and Transformers, which take seconds; a usage error (or
    # --help) answers at once.
    from playground.tools import bench

    return bench.run_named(args.which, list(args.options)) or EXIT_OK


COMMANDS: dict[str, Command] = {
    "report": Command("load a model, generate once, print every measurement", _report_arguments, _run_report_command),
    "selfcheck": Command("run the device tests (pytest -m device) on every device present: pass, fail or skip, "
                         "with the figures each measured", _selfcheck_arguments, _run_selfcheck_command),
    "gpu-run": Command("the prepared run for a GPU machine: the self-check and every GPU measurement, each step "
                       "in its own process and time budget, all written to OUT_DIR (docs/gpu.md)",
                       _gpu_run_arguments, _run_gpu_run_command),
    "bench": Command("the benchmarks, one subcommand each: " + ", ".join(BENCHES) + " (docs/bench.md)",
                     _bench_arguments, _run_bench_command),
}


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m playground", description="The device playground, without a browser.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(_run=cmd.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            raise UserError("no command given. Commands: " + ", ".join(COMMANDS) + " (see: python -m playground --help)")
        settings.read()  # every PLAYGROUND_* variable, before any work: a malformed one is the line below
        openmp.bind_before_torch()  # the first torch import: each OpenMP worker on a core of its own
        quiet_libraries()
        return args._run(args)
    except UserError as e:
        print(f"error: {one_line(e)}", file=sys.stderr)
        return EXIT_USAGE
    except settings.Malformed as e:  # the operator's setting, named with its value and a valid example
        print(settings.refusal(e, "python -m playground"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # one line, like the page; the traceback on request
        if settings.read().debug:
            traceback.print_exc()
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"error: {type(e).__name__}: {one_line(msg)[:500]} (set PLAYGROUND_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
