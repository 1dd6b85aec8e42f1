"""What a tab of the page is built with: words that follow the language, the model lane, language hooks.

A tab module's `build(page)` lays out its components inside the current Gradio
context and wires their events. `page.words(component, prop, key)` makes a
property follow the language selector; `page.on_language(fn, outputs, inputs)`
re-renders anything else (a result kept as data, a list of choices) when the
visitor switches language: `fn(lang, *input_values)` returns one update per output.

An event with more than a few outputs answers by name: its handler, declared with `@answers(name, ...)`,
returns (or yields) a dict from some of those names to their new values, and `answering(fn, components)`
wires it (the components of its names as the outputs, each answer keyed by them: Gradio updates the outputs a
dict names and leaves the others as they are).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Callable, Mapping

import gradio as gr
from gradio.context import LocalContext

from playground.core.i18n import t

# Load, generate and the lab share one queue lane: one runs at a time, the others
# wait their turn (so no measurement shares the CPU or a GPU with another).
LANE_ID = "model"
LANE = dict(concurrency_id=LANE_ID, concurrency_limit=1)
# Events that only read or stop: no queue, not in the API, and no progress overlay (a language switch or the
# banner's timer would otherwise draw one over every component it updates).
PRIVATE = dict(queue=False, api_visibility="private", show_progress="hidden")


def working(*components) -> dict:
    """A lane event's progress shown only on the component whose result it is working on (Gradio draws it on
    every output otherwise: during a Compare or a Generate, nine overlays, each refreshed with every update)."""
    return dict(LANE, show_progress_on=list(components))


def waiting(session: str) -> int | None:
    """How many other visitors have an event waiting in the lane's queue right now (None outside an
    event: a direct call has no queue). Read from the Blocks running this event (Gradio's own context)."""
    blocks = LocalContext.blocks.get(None)
    lanes = getattr(getattr(blocks, "_queue", None), "event_queue_per_concurrency_id", None)
    if lanes is None:
        return None
    lane = lanes.get(LANE_ID)
    return len({e.session_hash for e in list(lane.queue) if e.session_hash != session}) if lane else 0


def answers(*names: str) -> Callable:
    """Declare an event handler that answers by name: it returns (or yields) a dict from some of `names` to the
    new values of those outputs. A name outside `names` raises KeyError when it is answered (a bug, which the
    first test or click down that path meets): Gradio would refuse the update, less clearly."""
    def declare(fn: Callable) -> Callable:
        def checked(answer):
            if not isinstance(answer, dict):
                raise TypeError(f"{fn.__name__} answers by name: a dict of {names}, not {type(answer).__name__}")
            unknown = set(answer) - set(names)
            if unknown:
                raise KeyError(f"{fn.__name__} answered {sorted(unknown)}, outside its outputs {names}")
            return answer

        wrapper = _mapped(fn, checked)
        wrapper.outputs = names
        return wrapper
    return declare


def answering(fn: Callable, components: Mapping[str, gr.components.Component]) -> dict:
    """`fn=` and `outputs=` for an event listener or a language hook, from a handler declared with `answers`:
    the outputs are the components of its names, and each answer is keyed by those components."""
    return dict(fn=_mapped(fn, lambda answer: {components[k]: v for k, v in answer.items()}),
                outputs=[components[n] for n in fn.outputs])


def _mapped(fn: Callable, f: Callable) -> Callable:
    """`fn` with `f` applied to what it returns, or to each thing it yields. Its name and signature stay: Gradio
    reads them (the API's name, the gr.Request and gr.Progress it passes, whether it streams)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def each(*args, **kwargs):
            answers_ = fn(*args, **kwargs)
            try:
                for answer in answers_:
                    yield f(answer)
            finally:  # closed early (the visitor left, the run was cancelled): so is `fn`, at once
                answers_.close()
        return each

    @functools.wraps(fn)
    def once(*args, **kwargs):
        return f(fn(*args, **kwargs))
    return once


@dataclass
class Hook:
    fn: Callable[..., list]
    outputs: list
    inputs: list


@dataclass
class Page:
    lang: gr.Radio
    status: gr.Markdown
    words_of: list[tuple[gr.components.Component, dict[str, tuple[str, str]]]] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)
    after: list[Hook] = field(default_factory=list)
    tabs: gr.Tabs | None = None  # the tabs, for an event that opens another tab
    # components a tab shares with the tabs built after it, by name (the Playground's "mistake", "break_on")
    shared: dict[str, gr.components.Component] = field(default_factory=dict)

    def words(self, component, prop: str, key: str, fmt: str = "{}", **more: str):
        """`component`'s `prop` (and any `more` property=key) shows the text of `key` in the page's language."""
        props = {prop: (key, fmt), **{p: (k, "{}") for p, k in more.items()}}
        self.words_of.append((component, props))
        return component

    def on_language(self, fn: Callable[..., list], outputs: list, inputs: list | None = None) -> None:
        self.hooks.append(Hook(fn, list(outputs), list(inputs or [])))

    def after_language(self, fn: Callable[..., object], outputs: list, inputs: list | None = None) -> None:
        """`fn(lang, *input_values)` runs once the switch's own update is applied (a chained event): for what
        must be drawn after the switch has emptied it (a bar plot: see `handlers.ui_ledger`)."""
        self.after.append(Hook(fn, list(outputs), list(inputs or [])))

    def wire_language(self) -> None:
        """One event: the selector's change updates every localized property and runs every hook.

        A component may be named more than once (its label by `words`, its choices or value by a hook):
        it is listed once among the event's outputs, with its updates merged, because Gradio pairs
        outputs with updates by position and a component listed twice misplaces the updates after it."""
        named = [c for c, _ in self.words_of] + [o for h in self.hooks for o in h.outputs]
        outputs = list({id(c): c for c in named}.values())
        inputs = [self.lang] + [i for h in self.hooks for i in h.inputs]

        def switch(lang, *values):
            lang = "zh" if lang == "zh" else "en"
            out = [gr.update(**{p: fmt.format(t(key, lang)) for p, (key, fmt) in props.items()})
                   for _, props in self.words_of]
            at = 0
            for h in self.hooks:
                answer = h.fn(lang, *values[at:at + len(h.inputs)])
                if isinstance(answer, dict):  # an answer by name (`answering`): the outputs it leaves out stay
                    answer = [answer.get(c, gr.skip()) for c in h.outputs]
                out += list(answer)
                at += len(h.inputs)
            merged: dict[int, dict] = {}
            for comp, update in zip(named, out):
                merged[id(comp)] = {**merged.get(id(comp), {}), **_as_update(update)}
            return [merged[id(c)] for c in outputs]

        event = self.lang.change(switch, inputs, outputs, **PRIVATE)
        for h in self.after:
            event = event.then(h.fn, [self.lang, *h.inputs], h.outputs, **PRIVATE)


def _as_update(update) -> dict:
    """A hook's update as a dict of properties (a component instance, as handlers may return, included)."""
    if isinstance(update, dict):
        return update
    if isinstance(update, gr.components.Component):
        return {"__type__": "update", **{k: v for k, v in update.constructor_args.items() if k != "self"}}
    return {"__type__": "update", "value": update}
