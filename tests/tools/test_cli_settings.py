"""The command line refuses a malformed PLAYGROUND_* variable as app.py does: one line, exit 2, no work done."""

from __future__ import annotations

from playground.tools import cli


def test_a_malformed_variable_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setenv("PLAYGROUND_MEMORY_BUDGET", "lots")
    rc = cli.main(["report", "--model", "shakespeare-gpt2", "--device", "cpu", "--dtype", "float32", "--json"])
    out, err = capsys.readouterr()
    assert rc == cli.EXIT_USAGE and out == ""
    assert err.splitlines() == [
        "python -m playground: cannot start: PLAYGROUND_MEMORY_BUDGET='lots' is not a memory size (bytes, or a "
        "number with KB, MB, GB, KiB, MiB or GiB); set it to e.g. PLAYGROUND_MEMORY_BUDGET=2GB, or unset it for "
        "the default."]
