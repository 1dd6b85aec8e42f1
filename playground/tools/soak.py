"""Soak: many visitors at once, for minutes, against a live playground; one JSON line of figures.

    python -m playground.soak --minutes 10 --clients 8            # starts its own server (python app.py)
    python -m playground.soak --minutes 1 --clients 8 --url http://127.0.0.1:7860/ --warmup 0.5

Each client is a visitor with its own session looping over a load and a streaming
greedy generation; a side client calls the endpoints that do not queue, and a
leaving client loads, then hangs up mid-stream. Failures, cross-talk (checked by
greedy determinism), generations on a model the client did not load, evictions and
whether each reached its visitor, first-token latency and the server's RSS, threads
and descriptors are counted (`playground.tools.soak_checks`). How and why:
docs/soak.md. Exit code 0 when nothing failed, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

from gradio_client import Client

from playground.core.paths import BUNDLED_NAME as BUNDLED
from playground.tools.raw_session import RawSession
from playground.tools.server import log_exceptions, server_pid, start_server, stop_server
from playground.tools.soak_checks import Book, Monitor, Tally, percentile, slope, verdict

SYNTHETIC = "synthetic/gpt2-small"
# (model, dtype): a client walks this list from its own offset, so loads of different
# models and dtypes interleave with every other client's generations.
COMBOS = [(BUNDLED, "float32"), (SYNTHETIC, "bfloat16"), (BUNDLED, "bfloat16"), (SYNTHETIC, "float32")]
NAMES = ["ROMEO", "JULIET", "HAMLET", "OPHELIA", "MACBETH", "PORTIA", "OTHELLO", "VIOLA"]
WORDS = ("what light through yonder window breaks it is the east and juliet is the sun arise fair sun and kill "
         "the envious moon who is already sick and pale with grief that thou her maid art far more fair than she "
         "be not her maid since she is envious her vestal livery is but sick and green and none but fools do wear "
         "it cast it off").split()
DIAGNOSE_SAMPLE = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                   "cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)")
BUSY = re.compile(r"queue is full", re.I)
EVICTED = re.compile(r"was unloaded at \S+ to make room for another visitor's")  # the pool's notice


def prompt_for(i: int) -> str:
    """Client i's prompt: a name and 2 + 3i words, so no two clients' prompts have the same length."""
    words = [WORDS[j % len(WORDS)] for j in range(i, i + 2 + 3 * i)]
    return f"{NAMES[i % len(NAMES)]}: " + " ".join(words)


class Soak:
    def __init__(self, url: str, minutes: float, clients: int, tokens: int = 24, pid: int | None = None,
                 log: Path | None = None, side_clients: int = 1, leavers: int = 1, timeout: float = 300,
                 warmup: float = 1.0, progress=None) -> None:
        self.url, self.minutes, self.clients, self.tokens, self.warmup = url, minutes, clients, tokens, warmup
        self.pid = pid if pid is not None else server_pid(url)
        self.log, self.side_clients, self.leavers, self.timeout = log, side_clients, leavers, timeout
        self.book, self.tally = Book(), Tally()
        self.monitor = Monitor(self.pid)
        self.sessions: dict[int, object] = {}  # client index -> its gradio_client session
        self.floor_seconds: list[float | None] = []  # after the warm-up and after the run: until no model is held
        self.offsets: dict[int, int] = {}  # client index -> how far along COMBOS it is
        self.deadline = 0.0
        self.say = progress or (lambda msg: None)

    # -- one visitor's requests
    def _client(self):
        return Client(self.url, verbose=False)

    def _fail(self, kind: str, e: BaseException | str) -> None:
        msg = e if isinstance(e, str) else f"{type(e).__name__}: {e}"
        if BUSY.search(msg):
            self.tally.add(busy=1)
        elif EVICTED.search(msg):  # the visitor told that its model went for another's: the pool's rule
            self.tally.add(evicted=1)
        else:
            self.tally.add(failures=1)
            self.tally.note(kind, msg)

    def load(self, c, model: str, dtype: str) -> dict | None:
        self.tally.add(requests=1, loads=1)
        t0 = time.perf_counter()
        try:
            r = c.submit(model, "cpu", dtype, api_name="/load_model").result(timeout=self.timeout)
        except Exception as e:  # noqa: BLE001  (every failure is counted, none ends the run)
            self._fail("load", e)
            return None
        with self.tally.lock:
            self.tally.load_seconds.append(time.perf_counter() - t0)
        if (r.get("model"), r.get("dtype")) != (model, dtype):
            self._fail("load", f"asked for {model}/{dtype}, the report says {r.get('model')}/{r.get('dtype')}")
        if r.get("evicted_before"):  # its model before this one went for another's: told by this report
            self.tally.add(evicted=1)
        return r

    def generate(self, c, i: int) -> dict | None:
        prompt = prompt_for(i)
        self.tally.add(requests=1, generations=1)
        t0 = time.perf_counter()
        first = None
        try:
            job = c.submit(prompt, self.tokens, 0.0, 1.0, i, api_name="/generate")
            while not job.done():
                if first is None and any(o and o[0] for o in job.outputs()):
                    first = time.perf_counter() - t0
                if time.perf_counter() - t0 > self.timeout:
                    job.cancel()
                    raise TimeoutError(f"no answer within {self.timeout:.0f} s")
                time.sleep(0.02)
            text, stats = job.result(timeout=10)
            updates = [o for o in job.outputs() if o]
        except Exception as e:  # noqa: BLE001
            self._fail("generate", e)
            return None
        if first is None:
            first = time.perf_counter() - t0
        with self.tally.lock:
            self.tally.first_token.append(first)
        self.tally.add(tokens=int(stats.get("new_tokens") or 0))
        if stats.get("new_tokens") != self.tokens and stats.get("finish_reason") != "eos":
            self._fail("generate", f"{stats.get('new_tokens')} of {self.tokens} tokens, "
                                   f"finish_reason {stats.get('finish_reason')}")
        model, dtype = stats.get("model"), stats.get("dtype")
        # every update of one stream comes from one model
        made_by = {(u[1].get("model"), u[1].get("dtype")) for u in updates if isinstance(u[1], dict)}
        problem = ""
        if len(made_by) > 1:
            problem = f"one stream, several models: {sorted(map(str, made_by))}"
        else:
            problem = self.book.check(model or "?", dtype or "?", prompt, text, int(stats.get("prompt_tokens") or -1))
        if problem:
            self.tally.add(crosstalk=1)
            self.tally.note("crosstalk", f"client {i}: {problem}")
        return stats

    # -- the loops: `rounds` iterations (the warm-up), or until the deadline (the run)
    def _going(self, k: int, rounds: int | None) -> bool:
        return k < rounds if rounds is not None else time.monotonic() < self.deadline

    def _visitor(self, i: int, rounds: int | None = None) -> None:
        try:
            c = self.sessions.get(i) or self.sessions.setdefault(i, self._client())  # one session per visitor
        except Exception as e:  # noqa: BLE001
            self._fail("connect", e)
            return
        k = 0
        while self._going(k, rounds):
            model, dtype = COMBOS[(i + self.offsets.get(i, 0)) % len(COMBOS)]
            self.offsets[i] = self.offsets.get(i, 0) + 1
            k += 1
            self.load(c, model, dtype)
            if rounds is None and time.monotonic() >= self.deadline:
                break
            stats = self.generate(c, i)
            if stats and (stats.get("model"), stats.get("dtype")) != (model, dtype):
                self.tally.add(swapped=1)

    def _side(self, rounds: int | None = None) -> None:
        try:
            c = self._client()
        except Exception as e:  # noqa: BLE001
            self._fail("connect", e)
            return
        calls = [
            (lambda: c.predict(DIAGNOSE_SAMPLE, api_name="/diagnose"), lambda r: bool(r.get("matches"))),
            (lambda: c.predict(BUNDLED, "float32", api_name="/estimate"), lambda r: r.get("fits") is True),
            (lambda: c.predict(api_name="/break_it_scenarios"), lambda r: len(r) >= 1),
        ]
        k = 0
        while self._going(k, rounds):
            call, ok = calls[k % len(calls)]
            k += 1
            self.tally.add(requests=1, side_requests=1)
            try:
                r = call()
                if not ok(r):
                    self._fail("side", f"unexpected answer {str(r)[:200]}")
            except Exception as e:  # noqa: BLE001
                self._fail("side", e)
            time.sleep(0.2)

    def _leaver(self, rounds: int | None = None) -> None:
        """A visitor who opens the page, loads, starts a long generation and closes the tab after the first
        tokens (its heartbeat goes with it: the server sees the visitor leave)."""
        try:
            with RawSession(self.url) as probe:
                load, fn = probe.fn_index("load_model"), probe.fn_index("generate")
        except Exception as e:  # noqa: BLE001
            self._fail("connect", e)
            return
        k = 0
        while self._going(k, rounds):
            k += 1
            self.tally.add(requests=2, loads=1, abandoned=1)
            try:
                with RawSession(self.url, timeout=self.timeout).heartbeat() as s:
                    loaded = s.call(load, [BUNDLED, "cpu", "float32"])
                    if not loaded.get("success"):
                        self._fail("leaver", json.dumps(loaded.get("output", ""))[:300])
                        continue
                    s.join(fn, ["ROMEO: leave", 200, 0.0, 1.0, 0])
                    for msg in s.messages():
                        if msg.get("msg") == "process_generating":
                            break  # hang up: the with block closes the connection
                        if msg.get("msg") == "process_completed":
                            if not msg.get("success"):  # busy, or its model went for another's: counted
                                self._fail("leaver", json.dumps(msg.get("output", ""))[:300])
                            break
            except Exception as e:  # noqa: BLE001
                self._fail("leaver", e)
            if rounds is None:
                time.sleep(1.0)

    def _crowd(self, rounds: int | None, join_timeout: float) -> None:
        threads = [threading.Thread(target=self._visitor, args=(i, rounds), name=f"soak-client-{i}", daemon=True)
                   for i in range(self.clients)]
        side_rounds = None if rounds is None else 3 * rounds  # each of its three endpoints
        threads += [threading.Thread(target=self._side, args=(side_rounds,), name="soak-side", daemon=True)
                    for _ in range(self.side_clients)]
        threads += [threading.Thread(target=self._leaver, args=(rounds,), name="soak-leaver", daemon=True)
                    for _ in range(self.leavers)]
        for t in threads:
            t.start()
        end_by = time.monotonic() + join_timeout
        for t in threads:
            t.join(timeout=max(0.0, end_by - time.monotonic()))

    def warm_up(self) -> tuple | None:
        """The same crowd for `warmup` minutes (at least one round each), then the settled
        reading (`_settled_reading`) that rss_start is. First-use costs are not leaks: imports,
        the synthetic checkpoint, the page cache, and what a server first allocates under
        concurrent load (worker threads, the second malloc arena, per-session state). Measured
        on this machine, they come to 30-60 MB within the first minute, then RSS stays flat."""
        if self.warmup > 0:
            self.deadline = time.monotonic() + self.warmup * 60
            self._crowd(rounds=None, join_timeout=self.warmup * 60 + 2 * self.timeout + 30)
        else:
            self._crowd(rounds=1, join_timeout=4 * self.timeout)
        self.floor_seconds.append(self._leave_all()[0])
        return self._settled_reading(self._client())

    def _leave_all(self) -> tuple[float | None, dict]:
        """Every client closes (its heartbeat ends, as a closed tab's does): the seconds until the pool is at its
        floor, no visitor and no model (None when it is not after 30 s), and the pool then. Both counts: a hold
        goes at once, but a model nobody holds is unloaded only when the run holding the lane ends (a left
        client's generation may still be streaming), so "no visitor" can come seconds before "no model"."""
        for c in self.sessions.values():
            c.close()
        self.sessions.clear()
        probe, t0 = self._client(), time.monotonic()
        try:
            while True:
                pool = probe.predict(api_name="/status")
                if pool["visitors"] == 0 and pool["models"] == 0:
                    return time.monotonic() - t0, pool
                if time.monotonic() - t0 > 30:
                    return None, pool
                time.sleep(0.1)
        finally:
            probe.close()

    def _settled_reading(self, c) -> tuple | None:
        """RSS, threads and descriptors just after the bundled model (float32) is loaded by one
        client, every other visitor gone (the pool at its floor, then this one model). The pool
        hands freed heap back to the OS (malloc_trim) when it unloads, so this reading counts
        what is held, not what glibc keeps for reuse, which varies by tens of MB with the order
        of the last requests."""
        self.load(c, BUNDLED, "float32")
        time.sleep(1.0)  # the load's memory sampler thread ends
        return self.monitor.read()

    def run(self) -> dict:
        t_begin = time.monotonic()
        idle = self.monitor.read()
        self.say(f"warm-up: the same crowd for {self.warmup:g} min" if self.warmup > 0 else
                 "warm-up: every client once")
        start = self.warm_up()
        warm, self.tally = self.tally, Tally()  # the figures are the run's; the book is kept
        self.monitor.start()
        t0 = time.monotonic()
        self.deadline = t0 + self.minutes * 60
        self.say(f"{self.clients} clients + {self.side_clients} side + {self.leavers} leaving, "
                 f"for {self.minutes:g} min")
        self._crowd(rounds=None, join_timeout=self.minutes * 60 + 2 * self.timeout + 30)
        ran = time.monotonic() - t0
        self.monitor.halt.set()
        self.monitor.join(timeout=5)
        c = self._client()
        pool = c.predict(api_name="/status")  # as the crowd left it: models, visitors, bytes
        c.close()
        seconds, after = self._leave_all()  # every eviction's fate, once every visitor has gone
        self.floor_seconds.append(seconds)
        end, alive = self._alive_after()
        return self._result(idle, start, end, ran, alive, time.monotonic() - t_begin, warm, pool, after)

    def _alive_after(self) -> tuple[tuple | None, bool]:
        """Once the crowd has gone: the settled reading (as after the warm-up), and whether the
        server still answers a load and a generation."""
        try:
            c = self._client()
            loads = self.tally.failures
            end = self._settled_reading(c)
            _text, stats = c.submit(prompt_for(0), self.tokens, 0.0, 1.0, 0,
                                    api_name="/generate").result(timeout=self.timeout)
            ok = self.tally.failures == loads and (stats.get("new_tokens") == self.tokens
                                                    or stats.get("finish_reason") == "eos")
            return end, ok
        except Exception as e:  # noqa: BLE001
            self.tally.note("after", f"{type(e).__name__}: {e}")
            return self.monitor.read(), False

    def _result(self, idle, start, end, ran: float, alive: bool, wall: float, warm: Tally, pool: dict,
                after: dict) -> dict:
        t = self.tally
        samples = self.monitor.samples
        rss = [s[1] for s in samples] + ([start[1]] if start else []) + ([end[1]] if end else [])
        pts = [((s[0] - samples[0][0]) / 60, s[1] / 2**20) for s in samples] if samples else []
        exceptions = log_exceptions(self.log.read_text(errors="replace")) if self.log and self.log.exists() else None
        mb = lambda b: round(b / 2**20, 1) if b is not None else None  # noqa: E731
        out = {
            "requests": t.requests, "failures": t.failures, "busy": t.busy, "crosstalk": t.crosstalk,
            "first_token_p50": _r(percentile(t.first_token, 50)), "first_token_p95": _r(percentile(t.first_token, 95)),
            "rss_start": start[1] if start else None, "rss_end": end[1] if end else None,
            "rss_max": max(rss) if rss else None,
            "rss_start_mb": mb(start[1]) if start else None, "rss_end_mb": mb(end[1]) if end else None,
            "rss_max_mb": mb(max(rss)) if rss else None, "rss_idle_mb": mb(idle[1]) if idle else None,
            "rss_slope_mb_per_min": _r(slope(pts), 2),
            "minutes": round(ran / 60, 2), "clients": self.clients,
            "server_exceptions": len(exceptions) if exceptions is not None else None,
            "exceptions": (exceptions or [])[:5],
            "loads": t.loads, "generations": t.generations, "side_requests": t.side_requests,
            "abandoned": t.abandoned, "swapped": t.swapped, "tokens": t.tokens,
            # the pool: as the crowd left it, and each eviction (warm-up included) told to its visitor, dropped
            # with a visitor who left first, or pending; evicted_seen: the notices the clients received
            "pool_models": pool.get("models"), "pool_visitors": pool.get("visitors"),
            "pool_mb": mb(pool["bytes"]) if pool.get("bytes") is not None else None,
            "evictions": after.get("evictions"), "evictions_told": after.get("told"),
            "evictions_dropped": after.get("dropped"), "evictions_pending": after.get("pending"),
            "evicted_seen": warm.evicted + t.evicted, "pool_models_after_close": after.get("models"),
            "pool_mb_after_close": mb(after["bytes"]) if after.get("bytes") is not None else None,
            "floor_seconds": [_r(x, 2) for x in self.floor_seconds],
            "tokens_per_generation": self.tokens,
            "load_p50": _r(percentile(t.load_seconds, 50)), "load_p95": _r(percentile(t.load_seconds, 95)),
            "threads_start": start[2] if start else None, "threads_end": end[2] if end else None,
            "fds_start": start[3] if start else None, "fds_end": end[3] if end else None,
            "alive_after": alive, "warmup_minutes": self.warmup, "wall_minutes": round(wall / 60, 2),
            "warmup_failures": warm.failures + warm.crosstalk,
            **self.book.summary(), "samples": warm.samples + t.samples, "url": self.url, "pid": self.pid,
        }
        out["ok"] = verdict(out)
        return out


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)


def run(url: str, minutes: float, clients: int, **kw) -> dict:
    """Run the soak against a live server; returns the figures `main` prints."""
    return Soak(url, minutes, clients, **kw).run()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m playground.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=1.0, help="how long the clients loop (default 1)")
    p.add_argument("--clients", type=int, default=8, help="concurrent visitors (default 8)")
    p.add_argument("--url", help="a running playground; without it, `python app.py` is started on a free port")
    p.add_argument("--pid", type=int, help="the server's pid, for RSS (found from the port when omitted)")
    p.add_argument("--log", type=Path, help="the server's log, for exceptions (known when the server is ours)")
    p.add_argument("--tokens", type=int, default=24, help="new tokens per generation (default 24)")
    p.add_argument("--side-clients", type=int, default=1, help="clients calling diagnose/estimate meanwhile (default 1)")
    p.add_argument("--leavers", type=int, default=1, help="clients that leave mid-generation (default 1)")
    p.add_argument("--warmup", type=float, default=1.0,
                   help="minutes of the same load before rss_start is read, not counted in the figures "
                        "(default 1; 0: one round)")
    args = p.parse_args(argv)
    if (args.minutes <= 0 or args.clients < 1 or args.tokens < 1 or args.side_clients < 0 or args.leavers < 0
            or args.warmup < 0):
        print("error: --minutes must be > 0, --clients and --tokens >= 1, --side-clients, --leavers and --warmup "
              ">= 0", file=sys.stderr)
        return 2
    say = lambda msg: print(f"[soak] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    kw = dict(tokens=args.tokens, side_clients=args.side_clients, leavers=args.leavers, warmup=args.warmup,
              progress=say)
    if args.url is not None:
        result = run(args.url, args.minutes, args.clients, pid=args.pid, log=args.log, **kw)
    else:
        with tempfile.TemporaryDirectory(prefix="playground-soak-") as tmp:
            say("starting python app.py")
            proc, url, log = start_server(Path(tmp))
            try:
                result = run(url, args.minutes, args.clients, pid=proc.pid, log=log, **kw)
            finally:
                stop_server(proc)
            # what the server printed while shutting down counts too
            exceptions = log_exceptions(log.read_text(errors="replace"))
            result.update(server_exceptions=len(exceptions), exceptions=exceptions[:5], url=None)
            result["ok"] = verdict(result)
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
