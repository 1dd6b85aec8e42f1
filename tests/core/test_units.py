"""Bytes as people write them, both ways."""

import pytest

from playground.core.errors import UserError
from playground.core.units import fmt_bytes, fmt_seconds, parse_bytes

MiB = 2**20


def test_fmt_bytes():
    assert fmt_bytes(0) == "0 B"
    assert fmt_bytes(1536) == "1.5 KiB"
    assert fmt_bytes(-3 * MiB) == "-3.0 MiB"
    assert fmt_bytes(None) == "n/a"


@pytest.mark.parametrize("text, expected", [
    ("2GB", 2 * 10**9), ("512MiB", 512 * MiB), ("1.5 GiB", int(1.5 * 2**30)), ("123456", 123456),
    ("10mb", 10**7), (4096, 4096),
])
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("bad", ["lots", "2 parsecs", "-1GB", "0", "", "1e9"])
def test_parse_bytes_refuses_with_an_example(bad):
    with pytest.raises(UserError) as e:
        parse_bytes(bad)
    assert "memory size" in str(e.value) or "positive" in str(e.value)


def test_fmt_seconds_writes_durations_as_people_do():
    """Never '7.91e-05 s' (the guided path printed it): the unit that keeps three figures readable."""
    cases = [(7.91e-05, "79 µs"), (0.000512, "512 µs"), (0.0123, "12.3 ms"), (0.5123, "512 ms"), (7.912, "7.91 s"),
             (16.04, "16.0 s"), (125.2, "2 min 5 s"), (3725, "1 h 2 min"), (0.0, "0 µs")]
    assert [fmt_seconds(s) for s, _ in cases] == [want for _, want in cases]
