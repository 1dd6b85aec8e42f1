"""The Compare repeat bench reads a ranking as the page says it: neighbours told apart only where spreads part."""

from playground.tools import bench_compare


def _row(pair: str, low: float, mid: float, high: float) -> dict:
    return dict(pair=pair, runs=3, decode_tokens_per_s=mid, decode_min_tokens_per_s=low, decode_max_tokens_per_s=high)


def test_told_names_only_neighbours_whose_spreads_do_not_overlap():
    rows = [_row("cpu/float32", 430, 440, 450), _row("cpu/bfloat16", 520, 550, 560), _row("cpu/float16", 230, 240, 445)]
    # bfloat16's slowest run beat float32's fastest; float32 and float16 overlap (445 > 430): cannot tell
    assert bench_compare.told(rows) == [("cpu/bfloat16", "cpu/float32")]
    rows[2] = _row("cpu/float16", 230, 240, 250)
    assert bench_compare.told(rows) == [("cpu/bfloat16", "cpu/float32"), ("cpu/float32", "cpu/float16")]
