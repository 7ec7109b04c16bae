"""The view's HTTP server: 127.0.0.1 only, a random token in the URL, read-only.

The standard library's ``ThreadingHTTPServer`` (a thread per request: a slow switch read-back never
holds up the rates). Every request must carry ``?token=`` (compared in constant time) and a ``Host``
of 127.0.0.1 or localhost at this port (so a page elsewhere cannot reach it by DNS rebinding); anything
else gets 403. Only GET and HEAD exist. Endpoints:

* ``/`` the page; ``/static/view.js``, ``/static/place.js``, ``/static/view.css`` its assets (shipped in the
  package);
* ``/api/topology``, ``/api/rates``, ``/api/trees``, ``/api/flows``, ``/api/block/ID`` (a block opened),
  ``/api/switch/NAME``, ``/api/link/A/B`` (JSON).

Every request gets an answer: 404 for what names nothing, 400 for a path part longer than :data:`MAX_PART`,
500 (and one line on stderr) should a source fail; never a dropped connection.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from dcnlab.topos.errors import UserError
from dcnlab.view.sources import Source

HOST = "127.0.0.1"
"""The only address the view listens on."""

MAX_PART = 400
"""Longest part of a request's path (a node name, a block id): far above any the view draws; longer is 400."""
BACKLOG = 1024
"""Connections waiting to be accepted (socketserver's default is 5: of 500 parallel requests, about half
timed out at 60 s); the kernel caps it at net.core.somaxconn."""

_TYPES = {"view.js": "text/javascript; charset=utf-8", "place.js": "text/javascript; charset=utf-8",
          "view.css": "text/css; charset=utf-8"}
_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                                       "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"}


def _asset(name: str) -> bytes:
    return (resources.files("dcnlab.view") / "static" / name).read_bytes()   # Traversable.joinpath takes one name before 3.11


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:    # the URL holds the token: log nothing
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in _HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, obj: Any, status: int = 200) -> None:
        self._send(status, json.dumps(obj, separators=(",", ":")).encode())

    def _allowed(self, query: dict[str, list[str]]) -> bool:
        given = query.get("token", [""])[0]
        host = self.headers.get("Host", "")
        ok_host = host in (f"{HOST}:{self.server.port}", f"localhost:{self.server.port}")
        return ok_host and secrets.compare_digest(given.encode(), self.server.token.encode())

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if not self._allowed(parse_qs(url.query)):
            self._send(403, b"forbidden\n", "text/plain; charset=utf-8")
            return
        parts = [unquote(p) for p in url.path.split("/") if p]
        try:
            self._route(parts)
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:     # noqa: BLE001 - a request answered, never a dropped connection
            print(f"view: {url.path[:120]} failed: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr, flush=True)
            try:
                self._json({"error": f"internal error: {type(e).__name__}: {e}"[:300]}, 500)
            except OSError:
                pass

    def _route(self, parts: list[str]) -> None:
        src = self.server.source
        if any(len(p) > MAX_PART for p in parts):
            self._json({"error": f"a path part is longer than {MAX_PART} characters"}, 400)
            return
        if not parts:
            page = _asset("index.html").replace(b"{{TOKEN}}", self.server.token.encode())
            self._send(200, page, "text/html; charset=utf-8")
        elif parts[0] == "static" and len(parts) == 2 and parts[1] in _TYPES:
            self._send(200, _asset(parts[1]), _TYPES[parts[1]])
        elif parts[:1] != ["api"] or len(parts) < 2:
            self._json({"error": "not found"}, 404)
        elif parts[1:] == ["topology"]:
            self._json(src.topology())
        elif parts[1:] == ["rates"]:
            self._json(src.rates())
        elif parts[1:] == ["trees"]:
            self._json(src.trees())
        elif parts[1:] == ["flows"]:
            self._json(src.flows())
        elif parts[1] == "block" and len(parts) == 3 and (detail := src.block(parts[2])) is not None:
            self._json(detail)
        elif parts[1] == "switch" and len(parts) == 3 and src.has_node(parts[2]):
            self._json(src.switch(parts[2]))
        elif parts[1] == "link" and len(parts) == 4 and src.has_link(parts[2], parts[3]):
            self._json(src.link(parts[2], parts[3]))
        else:
            self._json({"error": "not found"}, 404)


class ViewServer(ThreadingHTTPServer):
    """Serves ``source`` on 127.0.0.1:``port`` (0: a free one) in a daemon thread until :meth:`close`."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = BACKLOG

    def __init__(self, source: Source, port: int = 0) -> None:
        self.source = source
        self.token = secrets.token_urlsafe(24)
        try:
            super().__init__((HOST, port), _Handler)
        except OSError as e:
            raise UserError(f"--view: cannot listen on {HOST}:{port}: {e.strerror or e}; valid: a free port "
                            f"1024..65535, or none for a random one") from None
        self.port = int(self.server_address[1])
        self._thread = threading.Thread(target=self.serve_forever, name="view-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def start(self) -> ViewServer:
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread.is_alive():
            self.shutdown()
        self.server_close()
        self.source.close()

    def __enter__(self) -> ViewServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
