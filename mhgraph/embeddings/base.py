"""What ingest and retrieval need of an embedding model, whichever runtime executes it."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class TextEmbedder(Protocol):
    """neo4j-graphrag's `Embedder` (embed_query) plus what ingest needs: batched passages, the
    model's own tokenizer (chunks are counted in its tokens) and the vector size for the index.

    Queries and passages are embedded apart because some models (bge) prefix queries with an
    instruction; vectors are unit length, so cosine is a dot product."""

    model_name: str

    @property
    def dimensions(self) -> int: ...

    @property
    def tokenizer(self) -> Any: ...   # a transformers fast tokenizer (it gives character offsets)

    @property
    def max_seq_length(self) -> int: ...

    def embed_query(self, text: str) -> list[float]: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a transformers model without its progress bars ("Loading weights", huggingface_hub's
    downloads), which would print on every command that loads one; mhgraph's own bars (ingest's)
    are not transformers' and stay. The setting is put back afterwards."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()
