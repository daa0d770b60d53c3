"""JSON from a model's reply: parsed, repaired when the damage is the usual kind, then validated."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from mhgraph.llm.jsonrepair import candidates

Model = TypeVar("Model", bound=BaseModel)


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a backend constrains its output to (OpenAI's json_schema response_format;
    llama.cpp turns it into a grammar)."""
    return schema.model_json_schema()


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
