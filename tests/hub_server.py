"""A small Hugging Face Hub in the tests: enough HTTP for the real `huggingface_hub` client.

`snapshot_download` (huggingface_hub 2.4) asks, in order:

- `GET /api/models/{repo}/revision/{rev}` (or `/api/models/{repo}`): the repo's `sha` (its commit);
- `GET /api/models/{repo}/tree/{commit}?recursive=...`: every file with `type`, `path`, `size`, `oid`
  (and `lfs` for large files), one page (no `Link` header);
- per file, `HEAD /{repo}/resolve/{commit}/{file}`: `X-Repo-Commit`, `ETag`, `Content-Length`;
- then `GET` of the same URL, with `Range` when it resumes a partial file.

Every request is recorded (`requests`), so a test can tell a download from a cache hit. Files can be
served truncated (with headers that agree, as a broken upload would be), cut off mid-stream (the
headers promise more than the socket delivers), or throttled, so that progress can be watched.
Unknown repos answer 404 with `X-Error-Code: RepoNotFound`, as the Hub does.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

LFS = (".safetensors", ".bin")


@dataclass
class Repo:
    folder: Path
    truncate: dict[str, int] = field(default_factory=dict)  # file -> bytes served (headers agree)
    cut: dict[str, int] = field(default_factory=dict)  # file -> bytes sent before the connection drops

    def files(self) -> dict[str, bytes]:
        out = {}
        for p in sorted(self.folder.iterdir()):
            if p.is_file():
                data = p.read_bytes()
                out[p.name] = data[: self.truncate[p.name]] if p.name in self.truncate else data
        return out

    def sha(self) -> str:
        h = hashlib.sha1()
        for name, data in self.files().items():
            h.update(name.encode() + hashlib.sha256(data).digest())
        return h.hexdigest()


class HubServer:
    """`with HubServer({"org/name": Repo(folder)}) as hub:` serves on `hub.url` until the block ends."""

    def __init__(self, repos: dict[str, Repo], bytes_per_second: float | None = None) -> None:
        self.repos = repos
        self.rate = bytes_per_second
        self.requests: list[tuple[str, str]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="hub-server", daemon=True)

    def __enter__(self) -> "HubServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def downloads(self) -> list[str]:
        """The files whose bytes were sent (GET of resolve/), in order."""
        return [p.rsplit("/", 1)[-1] for m, p in self.requests if m == "GET" and "/resolve/" in p]

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                self._serve(body=False)

            def do_GET(self) -> None:
                self._serve(body=True)

            def _json(self, obj: object, status: int = 200, headers: dict | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command == "GET":
                    self.wfile.write(data)

            def _missing(self) -> None:
                self._json({"error": "Repository not found"}, 404, {"X-Error-Code": "RepoNotFound"})

            def _serve(self, body: bool) -> None:
                path = unquote(urlparse(self.path).path)
                hub.requests.append((self.command, path))
                m = re.fullmatch(r"/api/models/(.+?)(?:/revision/([^/]+))?", path)
                if m and m.group(1) in hub.repos and "/tree/" not in path:
                    repo = hub.repos[m.group(1)]
                    return self._json({"id": m.group(1), "modelId": m.group(1), "sha": repo.sha(), "private": False,
                                       "siblings": [{"rfilename": f} for f in repo.files()]})
                m = re.fullmatch(r"/api/models/(.+?)/tree/([^/]+)(/.*)?", path)
                if m and m.group(1) in hub.repos:
                    entries = []
                    for name, data in hub.repos[m.group(1)].files().items():
                        e = {"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                        if name.endswith(LFS):
                            e["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
                        entries.append(e)
                    return self._json(entries)
                m = re.fullmatch(r"/(.+?)/resolve/([^/]+)/(.+)", path)
                if m and m.group(1) in hub.repos and m.group(3) in hub.repos[m.group(1)].files():
                    return self._file(hub.repos[m.group(1)], m.group(3), body)
                self._missing()

            def _file(self, repo: Repo, name: str, body: bool) -> None:
                data = repo.files()[name]
                etag = hashlib.sha256(data).hexdigest() if name.endswith(LFS) else hashlib.sha1(data).hexdigest()
                start, status = 0, 200
                rng = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", "") or "")
                if rng and body:
                    start, status = int(rng.group(1)), 206
                part = data[start:]
                self.send_response(status)
                self.send_header("X-Repo-Commit", repo.sha())
                self.send_header("ETag", f'"{etag}"')
                self.send_header("Content-Length", str(len(part)))
                self.send_header("Accept-Ranges", "bytes")
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if not body:
                    return
                if name in repo.cut:  # the socket closes early: fewer bytes than Content-Length promised
                    part = part[: max(repo.cut[name] - start, 0)]
                    self.close_connection = True
                chunk = 256 * 1024
                for i in range(0, len(part), chunk):
                    self.wfile.write(part[i:i + chunk])
                    if hub.rate:
                        time.sleep(chunk / hub.rate)
                if name in repo.cut:
                    self.wfile.flush()
                    self.connection.shutdown(2)

        return Handler
