"""A local OpenAI-compatible chat server over real HTTP, for tests (no LLM is reachable here).

It records every request and answers deterministically: it cites the first chunk ids it finds
in the prompt (lines like ``[chunk-id] (document: ...)``) and, when asked to, an id that was
not in the prompt, so tests can check that citations are verified. ``/v1/chat/completions``
answers plain JSON with ``usage``; anything else is a 404.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_CHUNK_LINE = re.compile(r"^\[([^\]\n]+)\] \(document:", re.MULTILINE)


@dataclass
class LLMServer:
    """Handle on the running server: ``base_url`` for clients, ``requests`` as received."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    cite: int = 2
    extra_citation: str | None = None
    reply: str | None = None

    def prompt_text(self, index: int = -1) -> str:
        messages = self.requests[index]["body"]["messages"]
        return "\n".join(str(m.get("content", "")) for m in messages)


def _answer(server: LLMServer, body: dict[str, Any]) -> str:
    if server.reply is not None:
        return server.reply
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    ids = _CHUNK_LINE.findall(text)[: server.cite]
    cites = "".join(f" [{cid}]" for cid in ids)
    if server.extra_citation:
        cites += f" [{server.extra_citation}]"
    if not ids:
        return "I do not know: the context holds no chunks."
    return f"Deterministic test answer based on the context.{cites}"


def _handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            server.requests.append(
                {"path": self.path, "body": body, "headers": dict(self.headers.items())}
            )
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            content = _answer(server, body)
            prompt_tokens = sum(
                len(str(m.get("content", "")).split()) for m in body.get("messages", [])
            )
            completion_tokens = len(content.split())
            self._send(
                200,
                {
                    "id": f"chatcmpl-test-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "test-model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def llm_server() -> Iterator[LLMServer]:
    """Start the server on 127.0.0.1 and a free port in a thread; stop it on exit."""
    state = LLMServer(base_url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    host, port = httpd.server_address[:2]
    state.base_url = f"http://{host!s}:{port}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
