"""Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp's server), through
neo4j-graphrag's OpenAILLM: it builds the `openai` client and makes the plain calls; streaming
uses that same client. The client retries connection errors, timeouts, 429 and 5xx with
exponential backoff (max_retries); what still fails becomes one LLMError line."""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator, Sequence

from neo4j_graphrag.exceptions import LLMGenerationError
from neo4j_graphrag.types import LLMMessage
from neo4j_graphrag.utils.rate_limit import NoOpRateLimitHandler

from mhgraph.llm.base import Completion, LLMError


class OpenAIChat:
    backend = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 120.0, max_retries: int = 3, identity: str | None = None) -> None:
        try:
            import openai
        except ImportError as exc:  # a dependency of mhgraph: only a broken install lacks it
            raise LLMError("the openai backend needs the 'openai' package (pip install openai)") from exc
        from neo4j_graphrag.llm import OpenAILLM

        self.openai = openai
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.timeout = timeout
        self.max_retries = max_retries
        # one model name may be two models on two servers; a pool of servers that serve the same
        # model (the Ray claims engine's endpoints) names the pool, so its answers share one cache
        self.identity = identity or self.base_url
        # A local server needs no key, but the client insists on one.
        self._llm = OpenAILLM(model_name=model, base_url=base_url, api_key=api_key or "unused",
                              timeout=timeout, max_retries=max_retries,
                              rate_limit_handler=NoOpRateLimitHandler())  # the client retries already
        # How this server takes structured output, lowered each time it rejects a form: OpenAI's
        # json_schema; json_object with the schema beside it (llama.cpp's server turns that into a
        # grammar); plain JSON mode (the schema stays in the check after the reply).
        self._json_form = 0
        self._lock = threading.Lock()

    def _response_format(self, json_schema: dict[str, Any] | None, form: int) -> dict[str, Any] | None:
        if json_schema is None:
            return None
        return [{"type": "json_schema", "json_schema": {"name": "reply", "schema": json_schema}},
                {"type": "json_object", "schema": json_schema},
                {"type": "json_object"}][form]

    def complete(self, messages: Sequence[LLMMessage], *, json_schema: dict[str, Any] | None = None,
                 **params: Any) -> Completion:
        started = time.perf_counter()
        while True:
            form = self._json_form
            try:
                response = self._llm.invoke(list(messages), response_format=self._response_format(json_schema, form),
                                            **params)
                break
            except LLMGenerationError as exc:
                cause = exc.__context__ or exc
                # A server that rejects a form of structured output names response_format in its
                # error (400, 422, or 500 from llama.cpp's server): try the next form.
                if (json_schema is not None and form < 2 and isinstance(cause, self.openai.APIStatusError)
                        and "response_format" in str(cause)):
                    with self._lock:   # worker threads may be rejected at the same form at once
                        self._json_form = max(self._json_form, form + 1)
                    continue
                raise self._error(cause) from exc
        usage = response.usage
        return Completion(text=response.content, prompt_tokens=usage.request_tokens if usage else None,
                          completion_tokens=usage.response_tokens if usage else None,
                          seconds=time.perf_counter() - started)

    def stream(self, messages: Sequence[LLMMessage], **params: Any) -> Iterator[str | Completion]:
        started = time.perf_counter()
        pieces: list[str] = []
        usage = None
        try:
            chunks = self._llm.client.chat.completions.create(
                model=self.model, messages=list(messages), stream=True, stream_options={"include_usage": True},
                **params)
            for chunk in chunks:
                usage = chunk.usage or usage
                if chunk.choices and (text := chunk.choices[0].delta.content):
                    pieces.append(text)
                    yield text
        except self.openai.OpenAIError as exc:
            raise self._error(exc) from exc
        yield Completion(text="".join(pieces), prompt_tokens=usage.prompt_tokens if usage else None,
                         completion_tokens=usage.completion_tokens if usage else len(pieces),
                         seconds=time.perf_counter() - started)

    def _error(self, exc: BaseException) -> LLMError:
        o, where = self.openai, self.base_url
        retried = f" (after {self.max_retries} retries)" if self.max_retries else ""
        if isinstance(exc, o.APITimeoutError):
            message = f"the LLM endpoint {where} did not answer within {self.timeout:g} s{retried}"
        elif isinstance(exc, o.APIConnectionError):
            message = f"cannot reach the LLM endpoint {where}{retried}: {exc.__cause__ or exc}"
        elif isinstance(exc, o.NotFoundError):
            message = f"model '{self.model}' is not served at {where} (HTTP 404: {_detail(exc)})"
        elif isinstance(exc, o.AuthenticationError):
            message = f"the LLM endpoint {where} refused the API key (OPENAI_API_KEY): {_detail(exc)}"
        elif isinstance(exc, o.APIStatusError):
            message = f"the LLM endpoint {where} answered HTTP {exc.status_code}{retried}: {_detail(exc)}"
        else:
            message = f"the LLM endpoint {where} failed: {exc}"
        return LLMError(" ".join(message.split()))


def _detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:200]
        if isinstance(error, str):
            return error[:200]
    return str(getattr(exc, "message", exc))[:200]
