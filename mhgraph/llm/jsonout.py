"""JSON from a model's reply: parsed, repaired when the damage is the usual kind, then validated."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a backend constrains its output to (OpenAI's json_schema response_format;
    llama.cpp turns it into a grammar)."""
    return schema.model_json_schema()


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


def parse(text: str, schema: type[Model]) -> Model:
    """The first repair of `text` that is valid JSON fitting `schema`; ValueError naming what was
    wrong with the reply as given."""
    first_error: str | None = None
    for candidate in candidates(text):
        try:
            return schema.model_validate(json.loads(candidate))
        except json.JSONDecodeError as exc:
            first_error = first_error or f"not JSON ({exc.msg} at column {exc.colno})"
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "the object"
            first_error = first_error or f"does not fit the schema ({where}: {problem['msg']})"
    raise ValueError(first_error or "empty reply")
