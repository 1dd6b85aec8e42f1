"""torch's CPU threads in the server: a core left to a browser on this machine, all of them for other machines."""

from __future__ import annotations

import pytest
import torch

from playground.core import settings
from playground.hw import cpu_threads, devices, openmp


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.1.1"])
def test_a_server_only_this_machine_reaches_leaves_one_core(host):
    assert cpu_threads.choose(0, host, cores=2, default=2) == cpu_threads.Choice(1, 2, "local")
    assert cpu_threads.choose(0, host, cores=16, default=16).threads == 15


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "my-space.hf.space", "127.example.com"])
def test_a_server_other_machines_reach_keeps_torchs_default(host):
    assert cpu_threads.choose(0, host, cores=2, default=2) == cpu_threads.Choice(2, 2, "default")


def test_torchs_default_below_the_cores_already_leaves_room_and_one_core_has_nothing_to_spare():
    assert cpu_threads.choose(0, "127.0.0.1", cores=16, default=8) == cpu_threads.Choice(8, 16, "default")
    assert cpu_threads.choose(0, "127.0.0.1", cores=1, default=1) == cpu_threads.Choice(1, 1, "default")


def test_the_setting_wins_and_is_capped_at_the_cores():
    assert cpu_threads.choose(2, "127.0.0.1", cores=2, default=2) == cpu_threads.Choice(2, 2, "set")
    assert cpu_threads.choose(64, "0.0.0.0", cores=4, default=4) == cpu_threads.Choice(4, 4, "set")
    assert settings.read({"PLAYGROUND_THREADS": "3"}).threads == 3
    assert settings.read({}).threads == 0
    with pytest.raises(settings.Malformed, match="PLAYGROUND_THREADS"):
        settings.read({"PLAYGROUND_THREADS": "two"})


def test_the_address_is_the_one_gradio_binds():
    assert cpu_threads.listening_on("", {}) == "127.0.0.1"  # Gradio's default
    assert cpu_threads.listening_on("", {"GRADIO_SERVER_NAME": "0.0.0.0"}) == "0.0.0.0"  # a Space's
    assert cpu_threads.listening_on("127.0.0.1", {"GRADIO_SERVER_NAME": "0.0.0.0"}) == "127.0.0.1"


def test_applied_it_is_what_torch_and_the_devices_panel_say(monkeypatch):
    before = torch.get_num_threads()
    try:
        cpu_threads.apply(cpu_threads.Choice(1, 2, "local"))
        assert torch.get_num_threads() == 1
        cpu = next(d for d in devices.discover() if d.id == "cpu")
        assert cpu.reason.text("en").startswith("torch threads: 1 of 2 cores: this server listens only")
        assert "留一个核给它" in cpu.reason.text("zh")
        torch.set_num_threads(2)  # changed behind its back: no longer claimed as chosen
        assert cpu_threads.current(2).why == "default"
    finally:
        torch.set_num_threads(before)
        monkeypatch.setattr(cpu_threads, "CURRENT", None)


def test_the_devices_panel_says_each_thread_has_a_core_only_where_the_workers_were_bound():
    """Bound (hw/openmp.py) with a team of two or more: the count, then that each thread runs on a core of its
    own; with one thread, or unbound, the count alone."""
    bound, unbound = openmp.Binding(True, "bound"), openmp.Binding(False, "user")
    two, one = cpu_threads.Choice(2, 2, "default"), cpu_threads.Choice(1, 2, "local")
    line = devices._threads_reason(two, bound)
    assert line.text("en").startswith("torch threads: 2; each thread of a run on a core of its own (OMP_PROC_BIND")
    assert line.text("zh").startswith("torch 线程数：2；一次运行的每个线程各占一个核")
    assert devices._threads_reason(two, unbound).text("en") == "torch threads: 2"
    assert devices._threads_reason(one, bound).text("en").startswith("torch threads: 1 of 2 cores: this server")
    assert "core of its own" not in devices._threads_reason(one, bound).text("en")
