import math

import pytest

from playground.core import inputs, settings
from playground.core.errors import UserError


@pytest.mark.parametrize("value", [0, -1, 10**9, "abc", math.nan, math.inf, 1.5, True, None, settings.read().max_new_tokens + 1])
def test_max_new_tokens_rejected(value):
    with pytest.raises(UserError) as e:
        inputs.check_max_new_tokens(value)
    assert "max_new_tokens" in str(e.value)


@pytest.mark.parametrize("value,expected", [(1, 1), (64.0, 64), ("32", 32), (settings.read().max_new_tokens, settings.read().max_new_tokens)])
def test_max_new_tokens_ok(value, expected):
    assert inputs.check_max_new_tokens(value) == expected


@pytest.mark.parametrize("prompt", ["", "   \n\t", "a\x00b", "x" * (settings.read().max_prompt_chars + 1), None, 5])
def test_prompt_rejected(prompt):
    with pytest.raises(UserError):
        inputs.check_prompt(prompt)


def test_prompt_ok_keeps_text():
    assert inputs.check_prompt("ROMEO:") == "ROMEO:"
    assert inputs.check_prompt("\u202eevil") == "\u202eevil"  # shown as text, never executed


@pytest.mark.parametrize("t", [-0.1, math.nan, 6, "hot"])
def test_temperature_rejected(t):
    with pytest.raises(UserError):
        inputs.check_temperature(t)


@pytest.mark.parametrize("p", [0, -0.5, 1.01, math.nan])
def test_top_p_rejected(p):
    with pytest.raises(UserError):
        inputs.check_top_p(p)


@pytest.mark.parametrize("s", [-1, 2**64, 1.5, "x"])
def test_seed_rejected(s):
    with pytest.raises(UserError):
        inputs.check_seed(s)


def test_errors_carry_their_sentence_in_both_languages():
    import re

    with pytest.raises(UserError) as e:
        inputs.check_max_new_tokens(0)
    err = e.value
    assert err.key == "err.whole"
    assert str(err).startswith("max_new_tokens must be a whole number from 1 to ")  # the API's English
    zh = err.text("zh")
    assert re.search(r"[\u4e00-\u9fff]", zh) and "max_new_tokens" in zh and "0" in zh  # Chinese, same facts
    assert err.text("en") == str(err)


def test_generation_params_are_checked_once_into_a_typed_value():
    p = inputs.generation_params("32", 0.0, 1, "7")
    assert p == inputs.GenerationParams(max_new_tokens=32, temperature=0.0, top_p=1.0, seed=7) and p.greedy
    with pytest.raises(UserError):
        inputs.generation_params(32, -1, 1, 0)


def test_a_plain_message_stays_english_everywhere():
    err = UserError("Could not load 'x': OSError: the library's own words")
    assert err.text("zh") == str(err)


# ---------------------------------------------------------------- memory limits (a placed load)

@pytest.mark.parametrize("text, limits, disk", [
    ("cpu=120MB,disk", (("cpu", 120 * 10**6),), True),
    ("cuda:0=2GB,cpu=8GB,disk", (("cuda:0", 2 * 10**9), ("cpu", 8 * 10**9)), True),
    (" disk , CPU = 1.5GiB , cuda:1=1GB, cuda=512MiB", (("cuda:0", 2**29), ("cuda:1", 10**9), ("cpu", int(1.5 * 2**30))),
     True),
    ("mps=4GB,cpu=2GB", (("mps", 4 * 10**9), ("cpu", 2 * 10**9)), False),
    ("disk", (), True),
])
def test_limits_are_read_into_a_typed_hashable_value_in_acceleratess_order(text, limits, disk):
    p = inputs.check_limits(text)
    assert p == inputs.Placement(limits, disk) and hash(p) == hash(inputs.Placement(limits, disk))
    assert inputs.check_limits(str(p)) == p  # written back as it is read
    assert p.limit("cpu") == dict(limits).get("cpu")


@pytest.mark.parametrize("bad, key", [
    (None, "place.err.limits_type"), (120, "place.err.limits_type"), ("", "place.err.limits_empty"),
    (" , ", "place.err.limits_empty"), ("x" * 201, "place.err.limits_long"), ("gpu=1GB", "place.err.limit_item"),
    ("cpu", "place.err.limit_item"), ("cpu:0=1GB", "place.err.limit_item"), ("cpu=lots", "place.err.limit_size"),
    ("cpu=0MB", "place.err.limit_size"), ("cpu=-1GB", "place.err.limit_size"), ("cpu=1GB,cpu=2GB", "place.err.limit_twice"),
    ("cuda=1GB,cuda:0=2GB", "place.err.limit_twice"), ("cpu=1e9", "place.err.limit_size"),
])
def test_bad_limits_say_what_was_wrong_in_both_languages(bad, key):
    import re

    with pytest.raises(UserError) as e:
        inputs.check_limits(bad)
    assert e.value.key == key
    assert re.search(r"[\u4e00-\u9fff]", e.value.text("zh"))
