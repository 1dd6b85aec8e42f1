"""Generation: stream tokens from `model.generate`, count them exactly, stop on demand.

`stream(...)` runs `generate()` in a worker thread and yields (text, `GenerationStats`):
`TokenStreamer` counts one token per `put()`, TTFT is the prefill, decode tokens/s is
(new tokens - 1) over the time from the first token to the last, and a `threading.Event`
read by `StopOnEvent` after each step stops it. Why not `TextIteratorStreamer`: docs/generation.md.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Iterator

import torch
from transformers import StoppingCriteria, StoppingCriteriaList
from transformers.generation.streamers import BaseStreamer

from playground.core.errors import UserError
from playground.hw import devices
from playground.core.inputs import GenerationParams
from playground.load.estimate import context_length

_DONE = object()

# Every decode engine by its one name: the API's `engine=` takes these three, each result carries its
# engine's name (`engine`), and the page's words for them are the i18n keys `engine.<name>`.
ENGINES = ("generate", "manual", "manual-nocache")  # generate() here; the manual loop in playground.run.decode
COMPILED = "compiled"  # the Speed tab's fourth: a static cache under torch.compile (playground.run.compiled)


@dataclass
class GenerationStats:
    engine: str = "generate"  # one of ENGINES
    prompt_tokens: int = 0
    new_tokens: int = 0
    ttft_seconds: float | None = None
    decode_seconds: float | None = None
    tokens_per_second: float | None = None  # decode rate, (new_tokens - 1) / decode_seconds
    total_seconds: float = 0.0
    finish_reason: str = "running"  # "running", "length", "eos", "stopped"
    greedy: bool = True
    chat_template_applied: bool = False  # the prompt went in as the user's message of the tokenizer's template
    max_new_tokens: int = 0  # the budget: while it runs, what is left of it at the rate so far says the time left
    # each new token's arrival, seconds since the call (TokenStreamer's timestamps): the gaps
    # between them are the per-token decode times (playground.run.decode.step_seconds)
    token_times: list[float] = field(default_factory=list)
    # The model that produced the text (filled by the pool): the session's own, named in every update.
    model: str = ""
    device: str = ""
    dtype: str = ""
    waiting: int | None = None  # other visitors waiting for the lane when the run ended (the page's queue)
    # the machine's 1-minute load average when the run ended, and the cores this process may use
    # (playground.hw.busy): above the cores, the run shared the CPU with other work
    load_average: float | None = None
    cores: int | None = None
    threads: int | None = None  # torch's CPU threads for the run (playground.hw.cpu_threads: why that many)
    # every byte once the last token is out, the cache still held (playground.run.accounting): part dicts
    ledger: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def fill(stats: GenerationStats, stamps: list[float], t_start: float, now: float) -> None:
    """The figures so far, every engine's, from each new token's arrival (`stamps`, perf_counter seconds)
    and the call's start: new tokens (one stamp each), TTFT (first - start), decode seconds (last - first),
    decode tokens/s = (new tokens - 1) / decode seconds, total (now - start)."""
    stats.new_tokens = len(stamps)
    stats.total_seconds = now - t_start
    if stamps:
        stats.ttft_seconds = stamps[0] - t_start
        stats.decode_seconds = stamps[-1] - stamps[0]
        if len(stamps) > 1 and stats.decode_seconds > 0:
            stats.tokens_per_second = (len(stamps) - 1) / stats.decode_seconds


class TokenStreamer(BaseStreamer):
    """Receives token ids from `generate()` and timestamps each one."""

    def __init__(self, on_first=None) -> None:
        self.queue: queue.Queue = queue.Queue()
        self.finished = threading.Event()  # set by end(): the consumer need not poll the queue
        self.prompt_tokens = 0
        self._prompt_seen = False
        self._on_first = on_first  # called once, as the prefill's token arrives (after its time is read)

    def put(self, value: torch.Tensor) -> None:
        now = time.perf_counter()
        if not self._prompt_seen:  # the first call carries the prompt
            self._prompt_seen = True
            self.prompt_tokens = int(value.shape[-1])
            return
        if self._on_first is not None:
            self._on_first()
            self._on_first = None
        for tok in value.reshape(-1).tolist():  # batch of 1: one id per step
            self.queue.put((tok, now))

    def end(self) -> None:
        self.queue.put(_DONE)
        self.finished.set()


class StopOnEvent(StoppingCriteria):
    """Stop generation when the event is set (the Stop button, a closed tab)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


def eos_ids(model) -> frozenset[int]:
    """The ids generate() stops at: `generation_config.eos_token_id`, one id or a list (Llama-3 and Qwen
    instruct models list several: end of text, end of turn). Every engine stops at these."""
    eos = model.generation_config.eos_token_id
    if eos is None:
        return frozenset()
    return frozenset(int(i) for i in eos) if isinstance(eos, (list, tuple)) else frozenset({int(eos)})


def finish_reason(ids: list[int], eos: frozenset[int], budget: int, stop_requested: bool) -> str:
    """Why a generation of `ids` ended: "eos" (its last token is any of the end ids), "length" (the budget
    was spent) or "stopped" (the stop event, before either)."""
    if ids and ids[-1] in eos:
        return "eos"
    if len(ids) >= budget:
        return "length"
    return "stopped" if stop_requested else "length"


def applies_template(tokenizer, chat_template: bool) -> bool:
    """Does this prompt go through the tokenizer's chat template? When it has one, unless the raw prompt
    was asked for. An instruct model given a bare prompt answers as if it were continuing a document."""
    return bool(chat_template and getattr(tokenizer, "chat_template", None))


def prompt_ids(tokenizer, prompt: str, chat_template: bool = True) -> dict:
    """The prompt as token ids on the CPU: through the chat template (the prompt as the user's message,
    then the assistant's turn opened by `add_generation_prompt=True`), or as it is."""
    if applies_template(tokenizer, chat_template):
        return dict(tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                                  return_tensors="pt", return_dict=True))
    return dict(tokenizer(prompt, return_tensors="pt"))


def room(tokenizer, model, prompt: str, chat_template: bool = True) -> tuple[int, int | None]:
    """(prompt tokens, context length or None): what the prompt leaves of the context for new tokens."""
    return int(prompt_ids(tokenizer, prompt, chat_template)["input_ids"].shape[-1]), context_length(model.config)


def encode(tokenizer, prompt: str, device: str, model, max_new_tokens: int, chat_template: bool = True,
           meter=None) -> dict:
    """Tokenise on the CPU, check the context fits (and, with a `meter`, that its cache and activations fit
    in memory beside the model), move the inputs to the model's device."""
    enc = prompt_ids(tokenizer, prompt, chat_template)
    n = int(enc["input_ids"].shape[-1])
    ctx = context_length(model.config)
    if n == 0:
        raise UserError.of("err.no_tokens")
    if ctx is not None and n >= ctx:
        raise UserError.of("err.prompt_fills_context", n=n, ctx=ctx)
    if ctx is not None and n + max_new_tokens > ctx:
        raise UserError.of("err.context", n=n, new=max_new_tokens, total=n + max_new_tokens, ctx=ctx, room=ctx - n)
    if meter is not None:
        meter.check(n + max_new_tokens)
    # The inputs must live where the embedding lives: an index_select between a
    # cpu tensor and a cuda weight is exactly the error the break-it lab shows.
    return {k: v.to(device) for k, v in enc.items()}


def stream(
    model,
    tokenizer,
    device: str,
    prompt: str,
    params: GenerationParams,
    stop: threading.Event | None = None,
    min_interval: float = 0.05,
    meter=None,
) -> Iterator[tuple[str, GenerationStats]]:
    """Yield (text so far, stats so far) while `generate()` runs; the last one is final.

    Updates are batched to at most one per `min_interval` seconds: the page cannot
    show more, and decoding text for every token would steal CPU from the model.
    `meter` (playground.run.accounting): given the cache generate() fills, and the prefill's peak.
    """
    stop = stop or threading.Event()
    inputs = encode(tokenizer, prompt, device, model, params.max_new_tokens, params.chat_template, meter)
    greedy = params.temperature == 0
    streamer = TokenStreamer(on_first=meter.first_token if meter is not None else None)
    kwargs = dict(
        **inputs, max_new_tokens=params.max_new_tokens, streamer=streamer,
        stopping_criteria=StoppingCriteriaList([StopOnEvent(stop)]),
        pad_token_id=model.generation_config.pad_token_id, do_sample=not greedy,
    )
    if greedy:
        kwargs.update(temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(temperature=params.temperature, top_p=params.top_p, top_k=0)
    cache = meter.new_cache(model) if meter is not None else None
    if cache is not None:  # the cache generate() would make itself, made here to be read afterwards
        kwargs["past_key_values"] = cache
    error: list[BaseException] = []

    def work() -> None:
        try:
            torch.manual_seed(params.seed)  # seeds the CPU and every CUDA generator
            with torch.inference_mode():
                model.generate(**kwargs)
        except BaseException as e:  # surfaced in the consumer, never lost in the thread
            error.append(e)
            streamer.end()

    stats = GenerationStats(greedy=greedy, chat_template_applied=applies_template(tokenizer, params.chat_template),
                            max_new_tokens=params.max_new_tokens)
    ids: list[int] = []
    if meter is not None:
        meter.before_prefill()  # before the clock starts: its readings are not the prefill's time
    t_start = time.perf_counter()
    thread = threading.Thread(target=work, name="generate", daemon=True)
    thread.start()
    stamps: list[float] = []  # each new token's arrival (the streamer's perf_counter reading)
    last_yield = 0.0
    shown = 0  # tokens in the last update
    stopped_early = False
    eos = eos_ids(model)
    try:
        while True:
            due = last_yield + min_interval
            wait = due - time.perf_counter()
            if wait <= 0:
                items = [streamer.queue.get()]  # an update is due: block for the next token (or the end)
            else:
                # Not due yet: sleep until it is, or the end. Waking for every token would take
                # the GIL from generate()'s Python loop ~300 times a second on a small model;
                # each token's time is stamped by the streamer, not read here.
                streamer.finished.wait(wait)
                items = []
            try:  # whatever has arrived
                while True:
                    items.append(streamer.queue.get_nowait())
            except queue.Empty:
                pass
            done = False
            for item in items:
                if item is _DONE:
                    done = True
                    break
                ids.append(item[0])
                stamps.append(item[1])
            now = time.perf_counter()
            if done or (len(ids) > shown and now >= due):
                last_yield, shown = now, len(ids)
                stats.prompt_tokens = streamer.prompt_tokens
                fill(stats, stamps, t_start, now)
                stats.token_times = [x - t_start for x in stamps]
                if done:
                    stopped_early = stop.is_set()
                    break
                # a copy: a consumer that keeps updates must not see them change later
                yield tokenizer.decode(ids, skip_special_tokens=True), replace(stats)
    finally:
        stop.set()  # a closed consumer (tab closed, Stop) ends the worker too
        thread.join()
    if error:
        raise error[0]
    stats.finish_reason = finish_reason(ids, eos, params.max_new_tokens, stopped_early)
    yield tokenizer.decode(ids, skip_special_tokens=True), stats


def generate_ids(model, tokenizer, device: str, prompt: str, n: int,
                 exact: bool = False) -> tuple[list[int], list[float], int]:
    """generate() greedy, as the page's generate runs it: (new token ids, each one's arrival in seconds
    since the call, prompt tokens). The streamer stamps each token as generate() hands it over. `exact`:
    EOS held back until `n` tokens, so that every run counts the same."""
    enc = tokenizer(prompt, return_tensors="pt").to(device)
    streamer = TokenStreamer()
    devices.sync(device)  # the inputs' copy to a GPU is not the generation's
    t0 = time.perf_counter()
    with torch.inference_mode():
        model.generate(**enc, max_new_tokens=n, min_new_tokens=n if exact else None, do_sample=False,
                       temperature=None, top_p=None, top_k=None,
                       pad_token_id=model.generation_config.pad_token_id, streamer=streamer)
    ids, stamps = [], []
    while True:
        try:
            item = streamer.queue.get_nowait()
        except queue.Empty:
            break
        if isinstance(item, tuple):
            ids.append(item[0])
            stamps.append(item[1] - t0)
    return ids, stamps, int(enc["input_ids"].shape[-1])
