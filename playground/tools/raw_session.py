"""One visitor speaking Gradio's queue protocol directly, as the page's JavaScript does.

Used to leave mid-stream (close the connection, as a closed tab does), and to send
what `gradio_client` will not (an event the app keeps private, a JSON body written
by hand).
"""

from __future__ import annotations

import json
import threading
import uuid

import httpx


class RawSession:
    """One visitor speaking Gradio's queue protocol directly, as the page's JavaScript does:
    POST /gradio_api/queue/join, then read the event stream GET /gradio_api/queue/data.

    Used to leave mid-stream (close the connection, as a closed tab does), and to send what
    gradio_client will not (an event the app keeps private, a JSON body written by hand)."""

    def __init__(self, url: str, session_hash: str | None = None, timeout: float = 300) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self.session_hash = session_hash or uuid.uuid4().hex[:11]
        self.http = httpx.Client(timeout=timeout)
        self._beat: httpx.Client | None = None

    def heartbeat(self) -> "RawSession":
        """Keep the session alive as a page does (GET gradio_api/heartbeat/<session>, held open): when the
        session closes, the server sees the visitor leave and runs the app's unload events."""
        self._beat = beat = httpx.Client(timeout=None)

        def listen() -> None:
            try:
                with beat.stream("GET", self.url + f"gradio_api/heartbeat/{self.session_hash}") as resp:
                    for _ in resp.iter_lines():
                        pass
            except Exception:  # noqa: BLE001  (closed by close(): the visitor left)
                pass

        threading.Thread(target=listen, name="raw-heartbeat", daemon=True).start()
        return self

    def close(self) -> None:
        self.http.close()
        if self._beat is not None:
            self._beat.close()

    def __enter__(self) -> "RawSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fn_index(self, api_name: str) -> int:
        deps = self.http.get(self.url + "config").json()["dependencies"]
        for d in deps:
            if d.get("api_name") == api_name:
                return d["id"]
        raise KeyError(api_name)

    def join(self, fn_index: int, data: list | None = None, body: str | None = None) -> str:
        """Queue one event; returns its event id. `body`: the raw JSON text to send instead."""
        if body is None:
            body = json.dumps({"data": data or [], "fn_index": fn_index, "session_hash": self.session_hash,
                               "event_data": None, "trigger_id": None})
        r = self.http.post(self.url + "gradio_api/queue/join", content=body.encode("utf-8", "surrogatepass"),
                           headers={"content-type": "application/json"})
        if r.status_code != 200:
            raise RawError(r.status_code, r.text[:500])
        return r.json()["event_id"]

    def messages(self):
        """The session's event stream, one dict per message, until Gradio closes it. Leaving
        the `with` block (or breaking out of the loop and closing the generator) hangs up."""
        with self.http.stream("GET", self.url + "gradio_api/queue/data",
                              params={"session_hash": self.session_hash}) as resp:
            for line in resp.iter_lines():
                if not line.startswith("data:"):
                    continue
                msg = json.loads(line[5:])
                yield msg
                if msg.get("msg") == "close_stream":
                    return

    def call(self, fn_index: int, data: list | None = None, body: str | None = None) -> dict:
        """Join and wait for the event's completion message: {'success': bool, 'output': {...}}."""
        event_id = self.join(fn_index, data, body)
        for msg in self.messages():
            if msg.get("msg") == "process_completed" and msg.get("event_id") == event_id:
                return msg
        raise RawError(0, "the event stream closed without a completion message")


class RawError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status, self.detail = status, detail
