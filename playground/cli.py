"""The command line: every measurement the page shows, without a browser.

    python -m playground report --model shakespeare-gpt2 --device cpu --dtype bfloat16 --json

`report` runs the pipeline the page and the API run, through the same shared
slot (`playground.slot.SLOT`): `SLOT.load` (validate, `from_pretrained`, then
`model.to(device)`, then `model.eval()`, each timed apart with RAM and VRAM read
before and after), then `SLOT.generate` (the token-counting streamer in a worker
thread, the stop criterion, the same greedy/sampling switch). Nothing here
measures anything: it prints the reports those functions return, so a figure
from the CLI and a figure on the page come from the same code.

With `--json`, stdout carries exactly one JSON object and nothing else. Libraries
sometimes print (a progress bar, a deprecation notice); while the model loads and
generates, file descriptor 1 points at stderr, so their output cannot end up
inside the JSON.

Exit codes: 0 on success, 2 for a bad argument (one line on stderr saying what
was wrong and what to do), 1 for anything else that failed (one line too; set
PLAYGROUND_DEBUG=1 for the traceback), 130 on Ctrl-C.

Commands are registered in `COMMANDS`; a new one is a function that adds its
arguments to a subparser and a function that runs it and returns an exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Callable

from playground.inputs import UserError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_PROMPT = "ROMEO:"  # the page's default prompt


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr, not usage plus message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UserError(f"{message} (see: {self.prog} --help)")


@dataclass
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ---------------------------------------------------------------- report

def _report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True,
                   help="bundled name (shakespeare-gpt2), synthetic/..., a Hub id, or a local folder")
    p.add_argument("--device", required=True, help="cpu, cuda, cuda:N, mps or auto")
    p.add_argument("--dtype", required=True, help="float32, float16, bfloat16 or auto")
    p.add_argument("--prompt", default=DEFAULT_PROMPT, help=f"text to continue (default {DEFAULT_PROMPT!r})")
    p.add_argument("--max-new-tokens", default="64", help="token budget, 1 to PLAYGROUND_MAX_NEW_TOKENS (default 64)")
    p.add_argument("--temperature", default="0", help="0 is greedy (default); above 0 samples")
    p.add_argument("--top-p", default="1", help="nucleus sampling mass, used when temperature > 0 (default 1)")
    p.add_argument("--seed", default="0", help="sampling seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")


def versions() -> dict:
    """Versions of what produced the numbers (read from package metadata: no imports)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("torch", "transformers", "accelerate"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def device_name(device: str) -> str:
    """The CPU model string, or the GPU's name, for the device a model was put on."""
    from playground import devices

    info = devices.check_device(device)
    if info.kind == "auto":
        gpus = [d.name for d in devices.discover() if d.kind == "cuda" and d.available]
        return " + ".join(gpus + [devices.cpu_name()])
    return info.name


def run_report(model: str, device: str, dtype: str, prompt: str = DEFAULT_PROMPT, max_new_tokens: object = 64,
               temperature: object = 0, top_p: object = 1, seed: object = 0,
               progress: Callable[[float, str], None] | None = None) -> dict:
    """Load and generate through the shared slot; return every figure as one dict.

    `load` is the LoadReport exactly as the API's load_model returns it and
    `generation` the final GenerationStats exactly as the API's generate streams
    it; the top-level figures are copied from them, under the same names.
    """
    from playground import devices, inputs, models
    from playground.slot import SLOT

    # Every cheap check first (the same checks SLOT.load and SLOT.generate make),
    # so that a typo costs nothing and never waits for a model to load.
    dtype = devices.check_dtype(dtype)
    dev = devices.check_device(device)
    models.resolve(model)
    inputs.check_max_new_tokens(max_new_tokens)
    inputs.check_temperature(temperature)
    inputs.check_top_p(top_p)
    inputs.check_seed(seed)
    inputs.check_prompt(prompt)

    t0 = time.perf_counter()
    load = SLOT.load(model, dev.id, dtype, progress=progress).to_dict()
    load_wall = time.perf_counter() - t0

    text, stats, updates = "", None, 0
    t1 = time.perf_counter()
    for text, stats in SLOT.generate(prompt, max_new_tokens, temperature, top_p, seed, session="cli"):
        updates += 1
    generate_wall = time.perf_counter() - t1
    gen = stats.to_dict()

    phases = {p["name"]: p for p in load["phases"]}
    return {
        "command": "report",
        "model": load["model"], "source": load["source"], "device": load["device"],
        "dtype": load["dtype"], "dtype_requested": load["dtype_requested"],
        "device_name": device_name(load["device"]),
        "versions": versions(),
        # the load report's own names
        "estimate_seconds": load.get("estimate_seconds"), "import_seconds": load.get("import_seconds"),
        "load_seconds": load["load_seconds"], "migrate_seconds": load["migrate_seconds"],
        "eval_seconds": load["eval_seconds"],
        "param_count": load["param_count"], "buffer_count": load["buffer_count"],
        "weights_bytes": load["weights_bytes"], "disk_bytes": load["disk_bytes"],
        "ram": {name: {k: p[k] for k in ("rss_before", "rss_after", "available_before", "available_after")}
                for name, p in phases.items()},
        "vram": {"available": load["vram"]["available"], "reason": load["vram"]["reason"],
                 "phases": {name: {"before": p["vram_before"], "after": p["vram_after"]} for name, p in phases.items()}},
        # the generation stats' own names
        "prompt": prompt,
        "prompt_tokens": gen["prompt_tokens"], "new_tokens": gen["new_tokens"],
        "max_new_tokens": inputs.check_max_new_tokens(max_new_tokens),
        "ttft_seconds": gen["ttft_seconds"], "decode_seconds": gen["decode_seconds"],
        "tokens_per_second": gen["tokens_per_second"], "total_seconds": gen["total_seconds"],
        "finish_reason": gen["finish_reason"], "greedy": gen["greedy"],
        "text": text,
        # what the consumer of the stream received: the token count carried by the
        # last update, and how many updates the stream yielded (at most one per 50 ms)
        "tokens_streamed": gen["new_tokens"], "stream_updates": updates,
        "wall_seconds": {"load": load_wall, "generate": generate_wall},
        "load": load,
        "generation": gen,
    }


def format_report(r: dict) -> str:
    """The readable summary: the page's load table and generation stats, as text."""
    from playground.memory import fmt_bytes

    def secs(s: float | None) -> str:
        if s is None:
            return "n/a"
        return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"

    what = {"estimate": "size check on the meta device",
            "import": "the architecture's Python code",
            "load": "from_pretrained (disk -> RAM)" if r["device"] != "auto" else "from_pretrained(device_map='auto')",
            "migrate": f"model.to('{r['device']}')", "eval": "model.eval()"}
    v = r["versions"]
    lines = [
        f"{r['model']} on {r['device']} ({r['device_name']}) in {r['dtype']}",
        f"python {v['python']} · torch {v['torch']} · transformers {v['transformers']} · accelerate {v['accelerate']}",
        "",
        f"{'phase':<8} {'what ran':<36} {'time':>10}   RSS before -> after (delta)",
    ]
    for p in r["load"]["phases"]:
        lines.append(
            f"{p['name']:<8} {what.get(p['name'], ''):<36} {secs(p['seconds']):>10}   {fmt_bytes(p['rss_before'])} -> "
            f"{fmt_bytes(p['rss_after'])} ({fmt_bytes(p['rss_after'] - p['rss_before'])})"
        )
    lines += [
        "",
        f"parameters {r['param_count']:,} · weights {fmt_bytes(r['weights_bytes'])} in {r['dtype']} "
        f"(sum of numel x element size) · on disk {fmt_bytes(r['disk_bytes'])}",
        f"migration: {r['load']['migrate_note']}",
        "VRAM: " + (r["vram"]["reason"] if not r["vram"]["available"] else
                    "; ".join(f"after {n}: " + ", ".join(f"cuda:{g['index']} allocated {fmt_bytes(g['allocated'])}"
                                                        for g in ph["after"]) for n, ph in r["vram"]["phases"].items())),
    ]
    if r["load"].get("label"):
        lines.append(f"note: {r['load']['label']}")
    if r["load"].get("hint"):
        lines.append(f"hint: {r['load']['hint']}")
    rate = f"{r['tokens_per_second']:.1f} tokens/s" if r["tokens_per_second"] else "n/a"
    lines += [
        "",
        f"prompt ({r['prompt_tokens']} tokens): {r['prompt']}",
        "-" * 60,
        r["text"],
        "-" * 60,
        f"time to first token {secs(r['ttft_seconds'])} · {r['new_tokens']} new tokens · decode {rate} "
        f"({max(r['new_tokens'] - 1, 0)} tokens in {secs(r['decode_seconds'])}) · total {secs(r['total_seconds'])} "
        f"· finished: {r['finish_reason']} · {'greedy' if r['greedy'] else 'sampling'}",
    ]
    return "\n".join(lines)


def _run_report_command(args: argparse.Namespace) -> int:
    progress = None if args.json else (lambda frac, desc: print(f"[{frac:4.0%}] {desc}", file=sys.stderr))
    with _stdout_to_stderr():
        result = run_report(args.model, args.device, args.dtype, prompt=args.prompt,
                            max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                            top_p=args.top_p, seed=args.seed, progress=progress)
    if args.json:
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        sys.stdout.write(format_report(result) + "\n")
    sys.stdout.flush()
    return EXIT_OK


COMMANDS: dict[str, Command] = {
    "report": Command("load a model, generate once, print every measurement", _report_arguments, _run_report_command),
}


# ---------------------------------------------------------------- plumbing

def quiet_libraries() -> None:
    """No progress bars, no advisory warnings: the output is the report."""
    import warnings

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    warnings.filterwarnings("ignore")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


@contextlib.contextmanager
def _stdout_to_stderr():
    """Point fd 1 (and sys.stdout) at stderr for the duration, C-level writes included."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m playground", description="The device playground, without a browser.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(p)
        p.set_defaults(_run=cmd.run)
    return parser


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            raise UserError("no command given. Commands: " + ", ".join(COMMANDS) + " (see: python -m playground --help)")
        quiet_libraries()
        return args._run(args)
    except UserError as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # one line, like the page; the traceback on request
        if os.environ.get("PLAYGROUND_DEBUG"):
            traceback.print_exc()
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"error: {type(e).__name__}: {_one_line(msg)[:500]} (set PLAYGROUND_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
