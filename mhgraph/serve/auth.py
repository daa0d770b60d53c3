"""The API key a server reachable from other machines requires: sent as X-API-Key, or as
Authorization: Bearer KEY (what MCP clients send)."""

from __future__ import annotations

import hmac
import json
from typing import Any, Awaitable, Callable, Mapping

REFUSED = "missing or wrong API key: send it as X-API-Key (or Authorization: Bearer)"


def key_sent(headers: Mapping[str, str]) -> str | None:
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:].strip() if bearer.lower().startswith("bearer ") else None)


def key_matches(sent: str | None, key: str) -> bool:
    return sent is not None and hmac.compare_digest(sent.encode(), key.encode())


def require_key(app: Callable[..., Awaitable[Any]], key: str | None) -> Callable[..., Awaitable[Any]]:
    """ASGI `app` behind the key (None: as it is); lifespan events pass through."""
    if key is None:
        return app

    async def guarded(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not key_matches(key_sent(headers), key):
                body = json.dumps({"detail": REFUSED}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)
    return guarded
