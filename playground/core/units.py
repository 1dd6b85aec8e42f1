"""Bytes as people write them: '2GB', '512MiB' in, '1.5 GiB' out; durations out as '85 µs', '12.3 ms', '2 min 5 s'."""

from __future__ import annotations

import math
import re

from playground.core.errors import UserError

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30, "tib": 2**40}


def fmt_bytes(n: int | float | None) -> str:
    """Human-readable bytes (binary units, as `nvidia-smi` and `free` print)."""
    if n is None:
        return "n/a"
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{sign}{n:.0f} {unit}" if unit == "B" else f"{sign}{n:.1f} {unit}"
        n /= 1024
    return f"{sign}{n:.1f} TiB"


def _three(x: float) -> str:
    """Three significant figures without an exponent: 1.23, 12.3, 123 (and 1000 where 999.6 rounds up)."""
    return f"{x:.0f}" if x >= 99.95 else f"{x:.1f}" if x >= 9.995 else f"{x:.2f}"


def fmt_seconds(s: float) -> str:
    """A duration in the unit that keeps it readable, never with an exponent: '79 µs', '0.51 ms'...'512 ms',
    '7.91 s', '2 min 5 s', '1 h 4 min'."""
    if s < 0:
        return "-" + fmt_seconds(-s)
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{_three(s * 1e3)} ms"
    if s < 60:
        return f"{_three(s)} s"
    m, sec = divmod(round(s), 60)
    return f"{m} min {sec} s" if m < 60 else f"{m // 60} h {m % 60} min"


def fmt_si(n: int | float, up: bool = False) -> str:
    """Bytes in the units memory limits are written in (powers of 1000): '28.3 MB'; `up` rounds up, so that
    a size given as the least to write is enough."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= size:
            value = n / size
            value = math.ceil(value * 10) / 10 if up else value
            return f"{value:.1f} {unit}"
    return f"{int(n)} B"


def bytes_of(text: str) -> int | None:
    """'2GB' -> 2e9, '512MiB' -> 2**29, '1.5 GiB', '123456' -> bytes; None when `text` is not a size."""
    m = re.fullmatch(r"\s*(\d{1,15}(?:\.\d{1,9})?)\s*([A-Za-z]{0,3})\s*", text)
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        return None
    return int(float(m.group(1)) * _UNITS[unit])


def parse_bytes(text: str | int) -> int:
    """'2GB' -> 2e9, '512MiB' -> 2**29, '1.5 GiB', '123456' -> bytes (GB decimal, GiB binary)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        value = bytes_of(str(text))
        if value is None:
            raise UserError(
                f"'{str(text)[:40]}' is not a memory size. Write bytes (e.g. 2000000000) or a number with "
                "a unit: KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. 2GB."
            )
    if value <= 0:
        raise UserError(f"A memory size must be positive; got {text!r}.")
    return value
