"""Log every P4Runtime request and response of a channel to a file (after the tutorials' logger)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format


class GrpcRequestLogger(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    def __init__(self, path: Path, switch: str) -> None:
        self.path, self.switch = Path(path), switch
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _log(self, method: str, kind: str, msg: Any) -> None:
        body = text_format.MessageToString(msg, as_utf8=True) if hasattr(msg, "ListFields") else repr(msg)
        if len(body) > 20000:  # pipeline configs are megabytes of JSON
            body = body[:20000] + f"\n... ({len(body)} characters)\n"
        stamp = time.strftime("%H:%M:%S") + f".{int(time.time() * 1000) % 1000:03d}"
        with self._lock, self.path.open("a") as f:
            f.write(f"[{stamp}] {self.switch} {method} {kind}\n{body}\n")

    def intercept_unary_unary(self, continuation, client_call_details, request):
        self._log(client_call_details.method, "request", request)
        response = continuation(client_call_details, request)
        if response.exception() is None:
            self._log(client_call_details.method, "response", response.result())
        else:
            self._log(client_call_details.method, "error", response.exception())
        return response

    def intercept_unary_stream(self, continuation, client_call_details, request):
        self._log(client_call_details.method, "request", request)
        return continuation(client_call_details, request)
