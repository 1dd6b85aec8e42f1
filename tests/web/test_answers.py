"""An event that answers by name (playground.web.page.answers / answering): it names only its outputs, its answers
reach Gradio keyed by the components, and a stream closed early closes the handler with it."""

import pytest

from playground.web.page import answering, answers


def test_a_name_outside_the_outputs_is_refused_when_answered():
    @answers("report", "note")
    def load(x):
        return {"note": x} if x else {"notes": "a typo"}

    assert load("refused") == {"note": "refused"} and load.outputs == ("report", "note")
    with pytest.raises(KeyError, match="notes"):
        load("")


def test_answers_reach_gradio_keyed_by_the_components_of_their_names():
    report, note = object(), object()  # Gradio's components; any key does here

    @answers("report", "note")
    def load(request=None):
        return {"note": "done"}

    wired = answering(load, {"report": report, "note": note, "unrelated": object()})
    assert wired["outputs"] == [report, note]
    assert wired["fn"]() == {note: "done"} and wired["fn"].__name__ == "load"  # the API's name stays


def test_a_stream_closed_early_closes_the_handler_at_once():
    closed = []

    @answers("text")
    def generate():
        try:
            for k in range(100):
                yield {"text": k}
        finally:
            closed.append(True)  # where a real run's stop event is set

    stream = answering(generate, {"text": "box"})["fn"]()
    assert next(stream) == {"box": 0}
    stream.close()  # the visitor left
    assert closed == [True]
