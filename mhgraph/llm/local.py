"""A GGUF model run in this process by llama.cpp (llama-cpp-python). Nothing is fetched: the file
is a packaged model (packaged.py) or any GGUF a user names with llm_model_path. JSON output is
constrained by a grammar llama.cpp builds from the schema."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from neo4j_graphrag.types import LLMMessage

from mhgraph.llm.base import Completion, LLMError

# not `pip install 'mhgraph[local-llm]'`, which compiles llama.cpp every time
BUILD_HINT = ("llama-cpp-python is not installed: bash scripts/build-llama-cpp.sh (builds it once, about "
              "20 minutes on 2 cores, then installs from a wheel cache)")


class LlamaCppChat:
    backend = "local"

    def __init__(self, model_path: Path, *, context: int = 8192, threads: int | None = None) -> None:
        # Without this, OpenMP threads spin while waiting and starve everything else on the
        # machine (offline-models.md measured generation falling from 8.5 to 2.2 tokens/s). libgomp
        # reads it when it loads, which importing llama_cpp does: so before the import.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import llama_cpp
        except ImportError as exc:
            raise LLMError(BUILD_HINT) from exc
        if not model_path.is_file():
            raise LLMError(f"{model_path}: no such model file (llm_model_path)")
        self.model = model_path.stem
        self.path = model_path
        stat = model_path.stat()   # two files of the same name are two models to the cache
        self.identity = f"{model_path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        self._llama_cpp = llama_cpp
        try:
            self._llama = llama_cpp.Llama(model_path=str(model_path), n_ctx=context, n_threads=threads or os.cpu_count(),
                                          verbose=False)
        except ValueError as exc:
            raise LLMError(f"{model_path}: llama.cpp cannot load it as a GGUF model ({exc})") from exc
        self._lock = threading.Lock()   # one context: one generation at a time

    def _prompt_seconds(self) -> float | None:
        """Prompt processing time of the last call, from llama.cpp's own counters."""
        try:
            perf = self._llama_cpp.llama_perf_context(self._llama.ctx)
            self._llama_cpp.llama_perf_context_reset(self._llama.ctx)
            return perf.t_p_eval_ms / 1000
        except (AttributeError, TypeError):   # an older or newer binding without these counters
            return None

    def complete(self, messages: Sequence[LLMMessage], *, json_schema: dict[str, Any] | None = None,
                 **params: Any) -> Completion:
        response_format = {"type": "json_object", "schema": json_schema} if json_schema is not None else None
        with self._lock:
            self._prompt_seconds()
            started = time.perf_counter()
            try:
                out = self._llama.create_chat_completion(messages=list(messages), response_format=response_format,
                                                         **params)
            except ValueError as exc:   # e.g. the prompt exceeds the context
                raise LLMError(f"{self.path.name}: {exc}") from exc
            seconds = time.perf_counter() - started
            prompt_seconds = self._prompt_seconds()
        usage = out.get("usage") or {}
        choice = out["choices"][0]
        return Completion(text=choice["message"].get("content") or "", prompt_tokens=usage.get("prompt_tokens"),
                          completion_tokens=usage.get("completion_tokens"), seconds=seconds,
                          prompt_seconds=prompt_seconds, finish_reason=choice.get("finish_reason"))

    def stream(self, messages: Sequence[LLMMessage], **params: Any) -> Iterator[str | Completion]:
        pieces: list[str] = []
        with self._lock:   # released when the stream ends or is closed (LLM.stream closes it)
            self._prompt_seconds()
            started = time.perf_counter()
            chunks = self._llama.create_chat_completion(messages=list(messages), stream=True, **params)
            try:
                for chunk in chunks:
                    if text := chunk["choices"][0]["delta"].get("content"):
                        pieces.append(text)
                        yield text
            except ValueError as exc:
                raise LLMError(f"{self.path.name}: {exc}") from exc
            finally:
                chunks.close()
            seconds = time.perf_counter() - started
            prompt_seconds = self._prompt_seconds()
        yield Completion(text="".join(pieces), completion_tokens=len(pieces), seconds=seconds,
                         prompt_seconds=prompt_seconds)
