"""A small scripted OpenAI-compatible HTTP server on loopback, for fault injection: each request
to /v1/chat/completions takes the next step of the script (a reply, an HTTP error, a delay, a
slow stream); when the script runs out, `default` answers. Every request body is recorded."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Step:
    content: str = ""                 # the reply's text
    status: int = 200                 # an HTTP error instead, with `error` as its message
    error: str = "scripted failure"
    delay: float = 0.0                # seconds before answering
    chunk_delay: float = 0.0          # streams: seconds between pieces
    prompt_tokens: int = 11
    completion_tokens: int = 3


@dataclass
class ScriptedServer:
    script: list[Step] = field(default_factory=list)
    default: Callable[[dict[str, Any]], Step] = lambda body: Step("ok")
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    step = server.script.pop(0) if server.script else server.default(body)
                time.sleep(step.delay)
                try:
                    if step.status != 200:
                        self._send(step.status, {"error": {"message": step.error, "type": "scripted"}})
                    elif body.get("stream"):
                        self._stream(body, step)
                    else:
                        self._send(200, {
                            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": step.content}}],
                            "usage": {"prompt_tokens": step.prompt_tokens, "completion_tokens": step.completion_tokens,
                                      "total_tokens": step.prompt_tokens + step.completion_tokens}})
                except (BrokenPipeError, ConnectionResetError):   # the client gave up (a timeout test)
                    pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], step: Step) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = step.content.split(" ")
                for i, piece in enumerate(pieces):
                    time.sleep(step.chunk_delay)
                    delta = {"content": piece + (" " if i < len(pieces) - 1 else "")}
                    self._event({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                                 "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                self._event({"id": "x", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                             "choices": [], "usage": {"prompt_tokens": step.prompt_tokens,
                                                      "completion_tokens": len(pieces),
                                                      "total_tokens": step.prompt_tokens + len(pieces)}})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
