"""The page's pace: at most one update per interval on an injected clock, the first at once."""

from playground.web.pace import Pace, paced


def test_a_thousand_calls_a_second_pass_ten_times_a_second():
    now = [0.0]
    seen = []
    report = paced(lambda f, d: seen.append((f, d)), every=0.1, clock=lambda: now[0])
    for k in range(2000):  # two seconds of a call every millisecond
        report(k / 2000, f"step {k}")
        now[0] += 0.001
    assert seen[0] == (0.0, "step 0")
    assert 19 <= len(seen) <= 21


def test_calls_slower_than_the_pace_all_pass():
    now = [0.0]
    pace = Pace(0.1, clock=lambda: now[0])
    dues = []
    for _ in range(5):
        dues.append(pace.due())
        now[0] += 0.25
    assert dues == [True] * 5


def test_a_quiet_start_holds_the_first_update_for_one_interval_from_the_start():
    """A generation's pace counts from the click: the render of its first token would land in the decode it times."""
    now = [10.0]
    pace = Pace(0.25, clock=lambda: now[0], quiet_start=True)
    dues = []
    for _ in range(6):  # a token every 0.1 s
        now[0] += 0.1
        dues.append(pace.due())
    assert dues == [False, False, True, False, False, True]
