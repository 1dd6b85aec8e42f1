import math

import pytest

from playground import inputs
from playground.inputs import UserError


@pytest.mark.parametrize("value", [0, -1, 10**9, "abc", math.nan, math.inf, 1.5, True, None, inputs.MAX_NEW_TOKENS + 1])
def test_max_new_tokens_rejected(value):
    with pytest.raises(UserError) as e:
        inputs.check_max_new_tokens(value)
    assert "max_new_tokens" in str(e.value)


@pytest.mark.parametrize("value,expected", [(1, 1), (64.0, 64), ("32", 32), (inputs.MAX_NEW_TOKENS, inputs.MAX_NEW_TOKENS)])
def test_max_new_tokens_ok(value, expected):
    assert inputs.check_max_new_tokens(value) == expected


@pytest.mark.parametrize("prompt", ["", "   \n\t", "a\x00b", "x" * (inputs.MAX_PROMPT_CHARS + 1), None, 5])
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
