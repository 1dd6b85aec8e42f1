"""Can the server listen where the settings say? `python app.py` asks first, before its imports (~8 s here):
a taken port or a foreign address is one line naming the variable that set it, and exit 2, within a second."""

from __future__ import annotations

import errno
import socket

from playground.core import settings


def check_or_exit(s: settings.Settings) -> settings.Settings:
    """`s`, when the server can listen where it says; else one line on stderr and exit 2."""
    line = problem(s)
    if line:
        settings.exit_on(line)
    return s


def problem(s: settings.Settings) -> str:
    """Why the server could not listen where the settings say (a port in use, an address that is not
    this machine's), naming the variable that set it; '' when it can (or Gradio picks the port)."""
    if not s.port and not s.host:
        return ""
    host = s.host or "127.0.0.1"
    port = int(s.port) if s.port else 0
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind((host.strip("[]"), port))
    except OSError as e:
        return refusal(s, e)
    return ""


def refusal(s: settings.Settings, e: OSError) -> str:
    """One line for an address the server cannot listen on, naming the variable to change."""
    in_use = getattr(e, "errno", None) == errno.EADDRINUSE or "port" in str(e).lower()
    if in_use and s.port:
        why = f"cannot be listened on: port {s.port} on {s.host or '127.0.0.1'} is already in use (another server?)"
        return settings.refusal(settings.Malformed("PLAYGROUND_PORT", s.port, why, str(free_port())))
    if in_use:  # Gradio looked for a free port itself and found none
        return (f"app.py: cannot start: no free port for the server ({e}); set PLAYGROUND_PORT to a free one, "
                f"e.g. PLAYGROUND_PORT={free_port()}.")
    if s.host:
        why = f"cannot be listened on ({e.strerror or e}): it is not an address of this machine"
        return settings.refusal(settings.Malformed("PLAYGROUND_HOST", s.host, why, "127.0.0.1"))
    return f"app.py: cannot start: {e}"


def free_port() -> int:
    """A port free on 127.0.0.1 now (the one a refusal suggests)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
