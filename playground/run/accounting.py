"""A generation's memory ledger: the KV cache read from the cache object, the prefill's peak, every other part.

A `Meter` rides along one generation: the engine hands it the cache it fills (`new_cache`, or `keep`), calls
`before_prefill()` before its clock starts and `first_token()` when the prefill's token arrives; once the
last token is out, `parts(stats)` reads the ledger (`playground.hw.ledger`) with the cache still held, the
KV cache's bytes beside the per-token estimate x its tokens, the activation peak above the weights and the
prompt's cache. Then `release()` lets the cache go.
"""

from __future__ import annotations

from transformers import DynamicCache

from playground.core.i18n import said
from playground.core.units import fmt_bytes
from playground.hw import census, devices, ledger, memory
from playground.hw.ledger import Part, Peak
from playground.load import fit, kv
from playground.load.loader import LoadedModel
from playground.run.kvcache import cache_bytes


class Meter:
    def __init__(self, lm: LoadedModel, others: list[dict] = ()) -> None:
        self.lm = lm
        self.others = list(others)  # the other models this process holds (the pool's `others`): their part
        self.cache = None  # the cache object the engine filled (None: the engine keeps none)
        self.cacheless = False  # the engine recomputes every position instead
        self.peak = Peak(lm.device)
        self.rise: int | None = None  # the peak's rise over the prefill (to the first token)
        self.mapped_before: int | None = None  # the checkpoint's resident pages before the prefill

    def new_cache(self, model) -> DynamicCache | None:
        """The cache generate() would make for this model (a DynamicCache from its config), made here so that
        its bytes can be read once the generation is over; None for a model whose cache is of another kind."""
        if not getattr(model, "_supports_default_dynamic_cache", lambda: False)():
            return None
        self.cache = DynamicCache(config=model.config.get_text_config(decoder=True))
        return self.cache

    def keep(self, cache) -> None:
        self.cache = cache

    def check(self, tokens: int) -> None:
        """Refuse a context whose cache and activations would not fit beside the model (`fit.check_context`)."""
        fit.check_context(self.lm, tokens)

    def before_prefill(self) -> None:
        """Read where memory stands, before the engine's clock starts: the mapped weights' resident pages
        (paged in during the prefill, they are not activations) and the peak counter's start."""
        if self.lm.report.file_backed_bytes:
            self.mapped_before = census.resident_in(self.lm.mapped_ranges())
        self.peak.start()

    def first_token(self) -> None:
        self.rise = self.peak.read()

    def parts(self, prompt_tokens: int, new_tokens: int) -> list[Part]:
        """Every part now, the cache still held: the KV cache beside its estimate, the prefill's peak, the
        weights as resident now, the runtime read at the load (RSS with no model held)."""
        r = self.lm.report
        model = self.lm.model
        dtype = next(model.parameters()).dtype
        dev = devices.name(self.lm.device)
        tokens = max(prompt_tokens + new_tokens - 1, 0)  # the last token chosen is never fed back
        extra: list[Part] = []
        held = None
        if self.cache is not None:
            held, _ = cache_bytes(self.cache)
            extra.append(ledger.part("kv_cache", dev, held, "cache_object",
                                     estimate=kv.size(model.config, dtype, tokens),
                                     note=said("ledger.note.kv_tokens", tokens=tokens)))
        else:
            why = "ledger.note.no_cache" if self.cacheless else "ledger.note.not_dynamic"
            extra.append(ledger.part("kv_cache", dev, 0 if self.cacheless else None, "cache_object", note=said(why)))
        extra.append(self._activations(dev, held, tokens, prompt_tokens))
        weights = next((p for p in r.ledger if p.part == "weights"), None)
        runtime = next((p.bytes for p in r.ledger if p.part == "runtime"), None)
        memory.trim_heap()  # pages glibc kept after the generation's frees go back first: free memory is no part
        parts = ledger.assemble(model, runtime_anon=runtime, folder=self.lm.folder, extra=extra,
                                counted=self.lm.counted,
                                weights_estimate=weights.estimate_bytes if weights is not None else None)
        return ledger.add_others(parts, sum(o.get("copied", 0) for o in self.others))

    def _activations(self, dev: str, held: int | None, tokens: int, prompt_tokens: int) -> Part:
        """The prefill's rise less what stayed: the prompt's share of the cache and (on the CPU) the weights'
        pages read in from the file during it."""
        if self.rise is None:
            return ledger.part("activations", dev, None, self.peak.counter, scope="peak", note=self.peak.reason)
        prompt_kv = held * prompt_tokens // tokens if held and tokens else 0
        paged = 0
        if self.mapped_before is not None:
            now = census.resident_in(self.lm.mapped_ranges())
            paged = max((now or 0) - self.mapped_before, 0)
        note = said("ledger.note.activations", rise=fmt_bytes(self.rise), kv=fmt_bytes(prompt_kv), paged=fmt_bytes(paged))
        return ledger.part("activations", dev, max(self.rise - prompt_kv - paged, 0), self.peak.counter, scope="peak",
                           note=note)

    def release(self) -> None:
        self.cache = None
        memory.trim_heap()
