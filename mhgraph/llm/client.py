"""`LLM`: what every LLM step calls. One backend behind it, plus the response cache, JSON output
checked against a schema (repaired, then retried), and the run's cost accounting."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Iterator, Sequence, TypeVar

from neo4j_graphrag.types import LLMMessage
from pydantic import BaseModel

from mhgraph.llm import jsonout
from mhgraph.llm.base import ChatBackend, Completion, LLMError, LLMOutputError
from mhgraph.llm.cache import ResponseCache, cache_key

Model = TypeVar("Model", bound=BaseModel)

# Greedy decoding unless a step asks otherwise: the same prompt gives the same answer, which is
# what makes cached and fresh runs agree.
DEFAULT_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 512}


@dataclass
class Usage:
    """Cost of a run: model calls made (cache hits cost none), tokens as the backend counted them,
    seconds spent in calls, and replies that stayed unusable after repair and retries."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0
    retries: int = 0
    failures: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}

    def copy(self) -> Usage:
        return replace(self)

    def since(self, earlier: Usage) -> Usage:
        """What was spent after `earlier`, a copy of this usage taken then (a worker's batch, say)."""
        return Usage(**{f.name: getattr(self, f.name) - getattr(earlier, f.name) for f in fields(self)})

    def add(self, other: Usage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class LLM:
    def __init__(self, backend: ChatBackend, cache: ResponseCache | None = None, *, json_attempts: int = 2) -> None:
        self.backend = backend
        self.cache = cache
        self.json_attempts = json_attempts
        self.usage = Usage()
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """How reports name what answered: backend and model."""
        return f"{self.backend.backend}:{self.backend.model}"

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**DEFAULT_PARAMS, **{k: v for k, v in params.items() if v is not None}}

    def _count(self, completion: Completion) -> None:
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += completion.prompt_tokens or 0
            self.usage.completion_tokens += completion.completion_tokens or 0
            self.usage.seconds += completion.seconds
            self.usage.prompt_seconds += completion.prompt_seconds or 0.0

    def _key(self, messages: Sequence[LLMMessage], params: dict[str, Any]) -> str:
        return cache_key(self.backend.backend, f"{self.backend.model}@{self.backend.identity}", messages, params)

    def _store(self, key: str, completion: Completion) -> None:
        if self.cache is not None and completion.text.strip():   # an empty reply is a failure: not kept
            self.cache.put(key, completion)

    def _failed_call(self, exc: Exception, started: float) -> LLMError:
        """A failed call is a call all the same (counted, with its time; nothing cached), and anything
        a backend raises becomes one line naming the model: a run records it and goes on."""
        self._count(Completion("", seconds=time.perf_counter() - started))
        if isinstance(exc, LLMError):
            return exc
        return LLMError(" ".join(f"{self.label}: {type(exc).__name__}: {exc}".split()))

    def _cached(self, key: str) -> Completion | None:
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is not None:
            with self._lock:
                self.usage.cache_hits += 1
        return hit

    def complete(self, messages: Sequence[LLMMessage], *, json_schema: dict[str, Any] | None = None,
                 **params: Any) -> Completion:
        params = self._params(params)
        key = self._key(messages, {**params, "json_schema": json_schema})
        if (hit := self._cached(key)) is not None:
            return hit
        started = time.perf_counter()
        try:
            completion = self.backend.complete(messages, json_schema=json_schema, **params)
        except Exception as exc:
            raise self._failed_call(exc, started) from exc
        self._count(completion)
        self._store(key, completion)
        return completion

    def chat(self, messages: Sequence[LLMMessage], **params: Any) -> str:
        return self.complete(messages, **params).text

    def json(self, messages: Sequence[LLMMessage], schema: type[Model], **params: Any) -> Model:
        """The reply as an instance of `schema`. A reply that is not valid JSON for it is repaired
        (jsonrepair.candidates); failing that, the model is shown its reply and the problem and asked
        again, up to json_attempts in all; then LLMOutputError, counted as a failure."""
        conversation = list(messages)
        format_ = jsonout.response_format(schema)
        text, problem = "", ""
        for attempt in range(self.json_attempts):
            text = self.complete(conversation, json_schema=format_, **params).text
            try:
                return jsonout.parse(text, schema)
            except ValueError as exc:
                problem = str(exc)
            if attempt + 1 < self.json_attempts:
                with self._lock:
                    self.usage.retries += 1
                conversation = [*conversation, {"role": "assistant", "content": text},
                                {"role": "user", "content": f"That reply {problem}. Reply with only one JSON object "
                                                            f"that fits this schema: {format_}"}]
        with self._lock:
            self.usage.failures += 1
        raise LLMOutputError(f"{self.label}: reply {problem} after {self.json_attempts} attempts", text)

    def record_failure(self) -> None:
        """A step that gave up on a reply for its own reasons (e.g. no usable answer) counts it here."""
        with self._lock:
            self.usage.failures += 1

    def stream(self, messages: Sequence[LLMMessage], **params: Any) -> Iterator[str]:
        """Text pieces as the model produces them (a cached reply comes as one piece); the whole
        reply is cached and counted once the stream ends."""
        params = self._params(params)
        key = self._key(messages, {**params, "json_schema": None})
        if (hit := self._cached(key)) is not None:
            yield hit.text
            return
        started = time.perf_counter()
        pieces = self.backend.stream(messages, **params)
        try:   # closing the backend's stream releases what it holds (the local model's lock)
            while True:
                try:
                    piece = next(pieces)
                except StopIteration:
                    return
                except Exception as exc:
                    raise self._failed_call(exc, started) from exc
                if isinstance(piece, Completion):   # the end: the whole reply, its counts and time
                    self._count(piece)
                    self._store(key, piece)
                else:
                    yield piece
        finally:
            pieces.close()
