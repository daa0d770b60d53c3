"""The one language-model layer of every LLM step: `load_llm(settings)` gives an `LLM` (or None
for the `none` backend, where each step runs its documented offline strategy)."""

from __future__ import annotations

from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.llm.base import ChatBackend, Completion, LLMError, LLMOutputError
from mhgraph.llm.cache import ResponseCache
from mhgraph.llm.client import LLM, Usage
from mhgraph.llm.packaged import DEFAULT_LOCAL_MODEL, PACKAGED_GGUF

__all__ = ["LLM", "ChatBackend", "Completion", "LLMError", "LLMOutputError", "MISSING_MODEL", "Usage", "load_llm",
           "backend_name"]

MISSING_MODEL = ("the openai LLM backend needs a model name: give --llm-model, or set MHGRAPH_LLM_MODEL (llm_model in "
                 "the config file)")


def backend_name(settings: Settings) -> str:
    """The backend `auto` stands for: openai when an endpoint or a key is configured, else none."""
    if settings.llm_backend != "auto":
        return settings.llm_backend
    return "openai" if settings.openai_base_url or settings.openai_api_key else "none"


def load_backend(settings: Settings, *, endpoint: str | None = None, identity: str | None = None) -> ChatBackend | None:
    """The configured backend; `endpoint` (openai) names the server of one of several that serve
    the model, `identity` the pool (the response cache keys by it)."""
    backend = backend_name(settings)
    if backend == "none":
        return None
    if backend == "openai":
        if not settings.llm_model:
            raise MhgraphError(MISSING_MODEL)
        from mhgraph.llm.endpoint import OpenAIChat

        return OpenAIChat(settings.llm_model, base_url=endpoint or settings.openai_base_url,
                          api_key=settings.openai_api_key, timeout=settings.llm_timeout,
                          max_retries=settings.llm_max_retries, identity=identity)
    from mhgraph.llm.local import LlamaCppChat

    if settings.llm_model_path is not None:
        path = settings.llm_model_path
    else:
        name = settings.llm_model or DEFAULT_LOCAL_MODEL
        if name not in PACKAGED_GGUF:
            raise MhgraphError(f"no packaged local model '{name}' (packaged: {', '.join(PACKAGED_GGUF)}); "
                               "set llm_model_path to a GGUF file for any other")
        path = PACKAGED_GGUF[name].assemble(settings.cache_dir)
    return LlamaCppChat(path, context=settings.llm_context, threads=settings.llm_threads or None)


def load_llm(settings: Settings, *, cache: bool = True, endpoint: str | None = None,
             identity: str | None = None) -> LLM | None:
    """The configured model with the response cache (cache=False: every call goes to the model);
    endpoint and identity: see load_backend."""
    backend = load_backend(settings, endpoint=endpoint, identity=identity)
    if backend is None:
        return None
    return LLM(backend, ResponseCache(settings.cache_dir / "llm" / "responses.sqlite") if cache else None)
