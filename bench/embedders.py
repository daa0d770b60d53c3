"""Embedding backends on this CPU: speed on real chunks, and how far each strays from its fp32 model.

    python bench/embedders.py [--chunks 640] [--out bench/results/embedders.json]

Encodes the first N chunks (256/32-token windows, as ingest makes them) of the MultiHop-RAG corpus
with each option the ingest issue names, and reports chunks/s and the cosine between each chunk's
vector and the fp32 reference model's (mean and minimum): 1.0 means the option changes nothing.

- sentence-transformers on torch, fp32: torch threads x encode batch size (encode() sorts texts by
  length itself, so batches are already length-sorted)
- torch dynamic int8 quantization of the linear layers (mhgraph's '+int8' models)
- the same model exported to ONNX (torch.onnx.export), run with ONNX Runtime: as exported, after
  ONNX Runtime's transformer graph fusions, and int8 dynamically quantized; and with OpenVINO.
  sentence-transformers' own ONNX/OpenVINO backends need optimum-onnx, which pins
  transformers<4.58, so the export here is done directly.
- bge-small-en-v1.5 fp32 and int8 (the ONNX files from Maven Central that mhgraph uses)

Needs the bench extra (pip install -e '.[bench]': onnx, onnxscript, openvino).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import numpy as np

from environment import describe, machine, versions

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "data" / "multihop-rag" / "corpus.json"
RESULTS = REPO / "bench" / "results"
MODEL = "all-MiniLM-L6-v2"


def chunk_texts(n: int) -> list[str]:
    from mhgraph.embeddings.sentence import SentenceEmbedder
    from mhgraph.ingest.chunking import TokenChunker
    from mhgraph.ingest.corpus import read_corpus

    chunker = TokenChunker(SentenceEmbedder(MODEL).tokenizer, 256, 32)
    texts: list[str] = []
    for article in read_corpus(CORPUS).articles:
        texts += [span.text for span in chunker.split(article.body)]
        if len(texts) >= n:
            break
    return texts[:n]


def measure(texts: list[str], encode: Callable[[list[str]], np.ndarray], reference: np.ndarray | None,
            repeats: int) -> tuple[dict[str, Any], np.ndarray]:
    encode(texts[:16])  # warm-up: first-call allocations and kernel selection
    best, vectors = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        vectors = encode(texts)
        best = min(best, time.perf_counter() - t)
    out: dict[str, Any] = {"chunks_per_s": round(len(texts) / best, 1), "seconds": round(best, 2)}
    if reference is not None:
        cos = np.sum(vectors * reference, axis=1)
        out.update(cos_mean=round(float(cos.mean()), 4), cos_min=round(float(cos.min()), 4))
    return out, vectors


def onnx_encoder(path: Path, tokenizer_file: Path, pooling: str, threads: int,
                 max_length: int = 256) -> Callable[[list[str]], np.ndarray]:
    """max_length 256: what sentence-transformers lets all-MiniLM-L6-v2 read, so both see the same tokens."""
    from mhgraph.embeddings.onnx import OnnxEmbedder

    embedder = OnnxEmbedder(path, tokenizer_file, model_name=path.stem, pooling=pooling, threads=threads,
                            max_length=max_length)
    return embedder.embed_documents


def openvino_encoder(path: Path, tokenizer_file: Path, threads: int) -> Callable[[list[str]], np.ndarray]:
    import openvino as ov
    from tokenizers import Tokenizer

    model = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_NUM_THREADS": threads})
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.enable_truncation(256)   # as sentence-transformers truncates all-MiniLM-L6-v2
    tokenizer.enable_padding()

    def encode(texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i in range(0, len(texts), 32):
            rows = order[i:i + 32]
            enc = tokenizer.encode_batch([texts[j] for j in rows])
            ids = np.array([e.ids for e in enc]); mask = np.array([e.attention_mask for e in enc])
            hidden = model({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            v = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out[rows] = v / np.linalg.norm(v, axis=1, keepdims=True)
        return out
    return encode


def export_minilm(folder: Path) -> tuple[Path, Path]:
    """MiniLM's transformer as ONNX (last_hidden_state; mean pooling is done outside) + tokenizer.json."""
    import torch

    from mhgraph.embeddings.sentence import SentenceEmbedder

    st = SentenceEmbedder(MODEL).model
    bert = st[0].auto_model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones(2, 16, dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(Encoder(), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(folder / "minilm.onnx"),
                      input_names=names, output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={n: {0: "batch", 1: "sequence"} for n in [*names, "last_hidden_state"]})
    st.tokenizer.save_pretrained(str(folder))
    return folder / "minilm.onnx", folder / "tokenizer.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=640, help="chunks to encode per option")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes per option (the best counts)")
    parser.add_argument("--out", type=Path, default=RESULTS / "embedders.json")
    args = parser.parse_args(argv)
    if not CORPUS.is_file():
        print(f"error: corpus not found: {CORPUS}", file=sys.stderr)
        return 1

    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    from mhgraph.embeddings import load_embedder

    texts = chunk_texts(args.chunks)
    rows: list[dict[str, Any]] = []

    def record(model: str, option: str, encode: Callable[[list[str]], np.ndarray], reference: np.ndarray | None,
               **extra: Any) -> np.ndarray:
        result, vectors = measure(texts, encode, reference, args.repeats)
        rows.append({"model": model, "option": option, **extra, **result})
        print(f"{model:24} {option:52} {result['chunks_per_s']:7.1f} chunks/s  "
              f"cos mean {result.get('cos_mean', 1):.4f} min {result.get('cos_min', 1):.4f}", flush=True)
        return vectors

    minilm = load_embedder(MODEL)
    reference = None
    for threads in (2, 1):
        torch.set_num_threads(threads)
        for batch in (16, 32, 64, 128):
            vectors = record(MODEL, f"torch fp32, {threads} threads, batch {batch}",
                             lambda t, b=batch: minilm.embed_documents(t, batch_size=b), reference,
                             threads=threads, batch_size=batch)
            reference = vectors if reference is None else reference
    torch.set_num_threads(2)
    int8 = load_embedder(MODEL + "+int8")
    record(MODEL, "torch int8 dynamic quantization (+int8), 2 threads, batch 32", int8.embed_documents, reference,
           threads=2, batch_size=32)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        exported, tokenizer_file = export_minilm(folder)
        fused = folder / "minilm-fused.onnx"
        optimize_model(str(exported), model_type="bert", num_heads=12, hidden_size=384).save_model_to_file(str(fused))
        quantized = folder / "minilm-int8.onnx"
        quantize_dynamic(str(exported), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
        fused_int8 = folder / "minilm-fused-int8.onnx"
        quantize_dynamic(str(fused), str(fused_int8), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        for threads in (2, 1):
            record(MODEL, f"ONNX Runtime fp32, {threads} threads, batch 32",
                   onnx_encoder(exported, tokenizer_file, "mean", threads), reference, threads=threads, batch_size=32)
        record(MODEL, "ONNX Runtime fp32 + transformer fusions, 2 threads",
               onnx_encoder(fused, tokenizer_file, "mean", 2), reference, threads=2, batch_size=32)
        record(MODEL, "ONNX Runtime int8 (dynamic, per channel), 2 threads",
               onnx_encoder(quantized, tokenizer_file, "mean", 2), reference, threads=2, batch_size=32)
        record(MODEL, "ONNX Runtime int8 + fusions, 2 threads",
               onnx_encoder(fused_int8, tokenizer_file, "mean", 2), reference, threads=2, batch_size=32)
        record(MODEL, "OpenVINO fp32 (from the ONNX export), 2 threads",
               openvino_encoder(exported, tokenizer_file, 2), reference, threads=2, batch_size=32)
    bge = load_embedder("bge-small-en-v1.5")
    bge_reference = record("bge-small-en-v1.5", "ONNX Runtime fp32, 2 threads, batch 32", bge.embed_documents, None,
                           threads=2, batch_size=32)
    bge_int8 = load_embedder("bge-small-en-v1.5+int8")
    record("bge-small-en-v1.5", "ONNX Runtime int8 (+int8, the quantized export), 2 threads, batch 32",
           bge_int8.embed_documents, bge_reference, threads=2, batch_size=32)

    info = machine()
    report = {
        "benchmark": "embedders", "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": f"python bench/embedders.py --chunks {args.chunks} --repeats {args.repeats}",
        "texts": f"the first {len(texts)} chunks (256/32-token windows) of ../{CORPUS.relative_to(REPO.parent)}",
        "method": "best of --repeats timed passes after a warm-up; cosine to the same model's fp32 output "
                  "(torch, 2 threads, batch 16 for MiniLM; ONNX Runtime fp32 for bge)",
        "machine": info, "software": {**versions(), **package_versions("onnxruntime", "openvino", "onnx")},
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# Embedding backends on {describe(info)}", "", f"{report['texts']}; {report['method']}.", "",
             "| model | option | chunks/s | cos mean | cos min |", "|---|---|---:|---:|---:|"]
    lines += [f"| {r['model']} | {r['option']} | {r['chunks_per_s']} | {r.get('cos_mean', '(reference)')} | "
              f"{r.get('cos_min', '')} |" for r in rows]
    args.out.with_suffix(".md").write_text("\n".join(lines) + f"\n\nCommand: `{report['command']}`, "
                                           f"{report['date_utc']}.\n")
    print(f"written to {args.out}")
    return 0


def package_versions(*names: str) -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


if __name__ == "__main__":
    sys.exit(main())
