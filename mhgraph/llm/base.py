"""What every language-model backend provides, and the errors LLM steps report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Protocol, Sequence, runtime_checkable

from neo4j_graphrag.types import LLMMessage

from mhgraph.errors import MhgraphError


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None = None       # as the backend counted them (None: not reported)
    completion_tokens: int | None = None
    seconds: float = 0.0
    prompt_seconds: float | None = None     # prompt processing apart, where the backend times it
    finish_reason: str | None = None


@runtime_checkable
class ChatBackend(Protocol):
    """Chat completion with optional JSON-schema output. `params` are sampling parameters
    (temperature, max_tokens, seed), passed to the model as they are."""

    backend: str      # "openai" | "local"
    model: str        # the model's name as reports record it
    identity: str     # what else tells two models of that name apart (endpoint; file, size, time)

    def complete(self, messages: Sequence[LLMMessage], *, json_schema: dict[str, Any] | None = None,
                 **params: Any) -> Completion: ...

    def stream(self, messages: Sequence[LLMMessage], **params: Any) -> Iterator[str | Completion]:
        """Text pieces as they are generated, then one Completion with the whole text, its counts
        and seconds."""
        ...


class LLMError(MhgraphError):
    """The model could not be reached or refused the request (one line, names the endpoint or file)."""


class LLMOutputError(LLMError):
    """The model answered, but not with what was asked (e.g. JSON that does not fit the schema,
    after repair and retries): recorded as a failure for that question, never fatal to a run."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text
