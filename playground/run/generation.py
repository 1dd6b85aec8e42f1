"""Generation: stream tokens from `model.generate`, count them exactly, stop on demand.

`stream(...)` runs `generate()` in a worker thread (`core.threads.relay`) and yields (text,
`GenerationStats`): `TokenStreamer` stamps one token per `put()` and hands them over in batches, TTFT is
the prefill, decode tokens/s is (new tokens - 1) over the time from the first token to the last, and a
`threading.Event` read by `StopOnEvent` after each step stops it. `greedy_kwargs(model)`: generate()'s
arguments for greedy decoding, for every caller. Why not `TextIteratorStreamer`: docs/generation.md.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Iterator

import torch
from transformers import StoppingCriteria, StoppingCriteriaList
from transformers.generation.streamers import BaseStreamer

from playground.core import threads
from playground.core.errors import UserError
from playground.core.inputs import GenerationParams
from playground.hw import devices
from playground.load.estimate import context_length
from playground.run.loop import eos_ids

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
    token_ids: list[int] = field(default_factory=list)  # the new tokens' ids
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
    """Receives token ids from `generate()`, stamps each one as it arrives, and hands them on in batches:
    `emit((pairs, last))`, `pairs` the (id, perf_counter time) of the tokens since the batch before, at the
    first token, then with the first token after each `min_interval` seconds, and at the end (`last` True,
    whatever is left). Per token it only appends to a list: the consumer wakes once per batch, not once per
    token (waking ~300 times a second would take the GIL from generate()'s Python loop)."""

    def __init__(self, emit: Callable[[tuple[list[tuple[int, float]], bool]], None], min_interval: float = 0.0,
                 on_first=None) -> None:
        self.emit = emit
        self.min_interval = min_interval
        self.pending: list[tuple[int, float]] = []
        self._due = 0.0  # when the next batch may go
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
            self.pending.append((tok, now))
        if now >= self._due:
            self._hand_over(now)

    def end(self) -> None:
        self._hand_over(time.perf_counter(), last=True)

    def _hand_over(self, now: float, last: bool = False) -> None:
        batch, self.pending = self.pending, []
        self._due = now + self.min_interval
        self.emit((batch, last))


class StopOnEvent(StoppingCriteria):
    """Stop generation when the event is set (the Stop button, a closed tab)."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool, device=input_ids.device)


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


def prompt_and_context(tokenizer, model, prompt: str, chat_template: bool = True) -> tuple[int, int | None]:
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
        raise UserError.of("err.context", n=n, new=max_new_tokens, total=n + max_new_tokens, ctx=ctx, left=ctx - n)
    if meter is not None:
        meter.check(n + max_new_tokens)
    # The inputs must live where the embedding lives: an index_select between a
    # cpu tensor and a cuda weight is exactly the error the break-it lab shows.
    return {k: v.to(device) for k, v in enc.items()}


def greedy_kwargs(model) -> dict:
    """generate()'s arguments for greedy decoding, one set for every caller: `do_sample=False`, the
    generation_config's sampling settings (temperature, top_p, top_k) cleared so that generate() neither
    applies nor warns about them, and its pad id (the loader sets EOS where a model names none)."""
    return dict(do_sample=False, temperature=None, top_p=None, top_k=None,
                pad_token_id=model.generation_config.pad_token_id)


def choice_kwargs(model, params: GenerationParams) -> dict:
    """generate()'s arguments for how `params` choose each token: greedy (`greedy_kwargs`), or sampling at
    its temperature and top_p (top_k 0: off, as the manual loop's warpers have none)."""
    if params.greedy:
        return greedy_kwargs(model)
    return dict(do_sample=True, temperature=params.temperature, top_p=params.top_p, top_k=0,
                pad_token_id=model.generation_config.pad_token_id)


def stream(
    model,
    tokenizer,
    device: str,
    prompt: str,
    params: GenerationParams,
    stop: threading.Event | None = None,
    min_interval: float = 0.05,
    meter=None,
    exact: bool = False,
) -> Iterator[tuple[str, GenerationStats]]:
    """Yield (text so far, stats so far) while `generate()` runs; the last one is final.

    Updates are batched to at most one per `min_interval` seconds: the page cannot
    show more, and decoding text for every token would steal CPU from the model.
    `meter` (playground.run.accounting): given the cache generate() fills, and the prefill's peak.
    `exact`: EOS held back until `max_new_tokens`, so that every run counts the same.
    """
    stop = stop or threading.Event()
    inputs = encode(tokenizer, prompt, device, model, params.max_new_tokens, params.chat_template, meter)
    prompt_tokens = int(inputs["input_ids"].shape[-1])
    kwargs = dict(**inputs, max_new_tokens=params.max_new_tokens, **choice_kwargs(model, params),
                  stopping_criteria=StoppingCriteriaList([StopOnEvent(stop)]))
    if exact:
        kwargs["min_new_tokens"] = params.max_new_tokens
    cache = meter.new_cache(model) if meter is not None else None
    if cache is not None:  # the cache generate() would make itself, made here to be read afterwards
        kwargs["past_key_values"] = cache
    on_first = meter.first_token if meter is not None else None

    def work(put) -> None:  # in the worker thread: generate(), its tokens handed over in batches
        torch.manual_seed(params.seed)  # seeds the CPU and every CUDA generator
        with torch.inference_mode():
            model.generate(**kwargs, streamer=TokenStreamer(put, min_interval, on_first))

    stats = GenerationStats(greedy=params.greedy, prompt_tokens=prompt_tokens, max_new_tokens=params.max_new_tokens,
                            chat_template_applied=applies_template(tokenizer, params.chat_template))
    ids: list[int] = []
    stamps: list[float] = []  # each new token's arrival (the streamer's perf_counter reading)
    if meter is not None:
        meter.before_prefill()  # before the clock starts: its readings are not the prefill's time
    devices.sync(device)  # the inputs' copy to a GPU is not the prefill's
    t_start = time.perf_counter()
    for batch, last in threads.relay(work, stop, name="generate"):
        for tok, stamp in batch:
            ids.append(tok)
            stamps.append(stamp)
        fill(stats, stamps, t_start, time.perf_counter())
        stats.token_times = [x - t_start for x in stamps]
        stats.token_ids = list(ids)
        if not last:  # the last batch is said once, below, with why the run ended
            # a copy: a consumer that keeps updates must not see them change later
            yield tokenizer.decode(ids, skip_special_tokens=True), replace(stats)
    stats.finish_reason = finish_reason(ids, eos_ids(model), params.max_new_tokens, stop.is_set())
    yield tokenizer.decode(ids, skip_special_tokens=True), stats


def generate_ids(model, tokenizer, device: str, prompt: str, n: int,
                 exact: bool = False) -> tuple[list[int], list[float], int]:
    """generate() greedy on the raw prompt, through the page's own streaming path (`stream`): (new token ids, each
    one's arrival in seconds since the call, prompt tokens). `exact`: EOS held back until `n` tokens, so that
    every run counts the same."""
    params = GenerationParams(max_new_tokens=n, temperature=0.0, chat_template=False)
    *_, (_, stats) = stream(model, tokenizer, device, prompt, params, min_interval=float("inf"), exact=exact)
    return stats.token_ids, stats.token_times, stats.prompt_tokens
