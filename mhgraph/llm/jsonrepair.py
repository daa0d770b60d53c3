"""Repairs of a model's JSON reply, most faithful first (no pydantic: bench/gpu_replies.py loads this file
by its path on machines without the project's dependencies)."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def candidates(text: str) -> list[str]:
    """The reply itself, then repairs in order of how little they change: the inside of a code
    fence, the outermost {...}, that without trailing commas, that with typographic quotes made
    plain."""
    found = [text.strip()]
    if fence := _FENCE.search(text):
        found.append(fence.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        body = text[start:end + 1]
        found.append(body)
        found.append(_TRAILING_COMMA.sub(r"\1", body))
        found.append(_TRAILING_COMMA.sub(r"\1", body).replace("\u201c", '"').replace("\u201d", '"'))
    if 0 <= start:  # cut off (max_tokens): close what is open, if that is all that is missing
        found.append(_close(text[start:]))
    return list(dict.fromkeys(found))


def _close(fragment: str) -> str:
    stack, in_string, escaped = [], False, False
    for ch in fragment:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    closed = fragment + ('"' if in_string else "")
    return _TRAILING_COMMA.sub(r"\1", closed.rstrip().rstrip(",") + "".join(reversed(stack)))
