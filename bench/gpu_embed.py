"""Chunks per second of one embedding actor: the Ray ingest's embedding stage on one device.

    python bench/gpu_embed.py [--corpus PATH] [--copies N] [--device cuda] [--model NAME]
        [--configs 32/32/fp32 128/256/fp16 ...] [--reference vectors.npy] [--out bench/results/gpu-embed]

Each configuration is ARTICLES/ENCODE_BATCH/PRECISION: the articles one actor call receives (the
Ray engine's batch_size, 32 by default), the chunks per forward pass (the embedder's batch;
"default" lets the embedder choose: 32 on CPUs, 256 on a GPU) and fp32 or fp16 weights. A call
runs `prepare` (chunking, on one CPU core: `ChunkStage`'s work minus its Neo4j lookup of stored
versions) and `embed_prepared` (all an `EmbedStage` on a GPU does once chunking runs apart), each
timed. Neither Ray nor Neo4j is
needed, so "embed only" is the ceiling one GPU actor sets; writes are measured by bench/scale.py.

--copies N embeds N retitled copies of the corpus (new documents, the same text) with each
configuration, for the time a corpus N times larger takes. --save-reference writes the vectors of
the first 256 chunks; --reference compares a run's vectors with such a file (cosine), e.g. a GPU's
against this machine's CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from environment import describe, machine, versions

from mhgraph.embeddings import load_embedder
from mhgraph.ingest.chunking import TokenChunker
from mhgraph.ingest.corpus import open_corpus
from mhgraph.ingest.pipeline import Tally, batched, embed_prepared, prepare

REFERENCE_CHUNKS = 256
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "multihop-rag" / "corpus.json"


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(0)
    return "CPU"


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def run_config(embedder: Any, articles: list, copies: int, per_call: int, encode_batch: int | None, device: str,
               chunk_size: int, overlap: int) -> dict[str, Any]:
    chunker = TokenChunker(embedder.tokenizer, chunk_size, overlap)
    embed = embedder.embed_documents
    embedder.embed_documents = lambda texts: embed(texts, batch_size=encode_batch)  # type: ignore[method-assign]
    chunk_s = embed_s = 0.0
    chunks = 0
    first: np.ndarray | None = None
    try:
        for copy in range(copies):
            for batch in batched((a if not copy else replace(a, title=f"{a.title} (copy {copy})",
                                                                  url=f"{a.url or a.title}#copy{copy}")
                                  for a in articles), per_call):
                t0 = time.perf_counter()
                documents = prepare(batch, "bench", chunker, embedder.model_name, Tally())
                t1 = time.perf_counter()
                chunks += embed_prepared(embedder, documents, "none")
                synchronize(device)
                t2 = time.perf_counter()
                chunk_s += t1 - t0
                embed_s += t2 - t1
                if copy:  # the reference holds the corpus's own first chunks
                    continue
                if first is None:
                    first = np.concatenate([d.embeddings for d in documents])
                elif len(first) < REFERENCE_CHUNKS:
                    first = np.concatenate([first, *(d.embeddings for d in documents)])
    finally:
        embedder.embed_documents = embed  # type: ignore[method-assign]
    total = chunk_s + embed_s
    return {"articles": len(articles) * copies, "chunks": chunks, "chunk_seconds": round(chunk_s, 2),
            "embed_seconds": round(embed_s, 2), "seconds": round(total, 2),
            "chunks_per_second": round(chunks / total, 1), "embed_chunks_per_second": round(chunks / embed_s, 1),
            "_first": first[:REFERENCE_CHUNKS] if first is not None else None}


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# One embedding actor on {report['device']}", "",
             f"{report['date']}, `{report['command']}`", "",
             (f"Device: {report['device']}; machine: {describe(report['machine'])}. "
              f"Model: {report['model']}. Corpus: {report['corpus']}. {report['note']}"), "",
             ("| articles per call / chunks per forward pass / weights | corpus | chunks | chunking s | embedding s "
              "| chunks/s (chunk + embed) | chunks/s (embed only) | cosine to reference (min) |"),
             "|---|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        cos = r.get("reference_cosine_min")
        lines.append(f"| {r['config']} | x{r['copies']} | {r['chunks']:,} | {r['chunk_seconds']} | {r['embed_seconds']} "
                     f"| {r['chunks_per_second']:,} | {r['embed_chunks_per_second']:,} "
                     f"| {'' if cos is None else f'{cos:.5f}'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--copies", type=int, nargs="+", default=[1])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--model-label", default=None, help="the model's name in the report (default --model)")
    parser.add_argument("--configs", nargs="+", default=["32/32/fp32", "32/256/fp32", "128/256/fp32", "128/256/fp16"])
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--chunk-overlap", type=int, default=32)
    parser.add_argument("--reference", type=Path, help="vectors of the first chunks to compare with (.npy)")
    parser.add_argument("--save-reference", type=Path, help="write the first config's first vectors (.npy)")
    parser.add_argument("--note", default="", help="a sentence for the report (how the model was obtained, say)")
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    args = parser.parse_args()

    articles = list(open_corpus(args.corpus).articles())
    embedder = load_embedder(args.model, device=args.device)
    if not hasattr(embedder, "model"):
        parser.error(f"--model {args.model}: only sentence-transformers models are measured here")
    reference = np.load(args.reference) if args.reference else None
    embedder.embed_documents(["warm-up"] * 64)  # CUDA context and kernels, outside the timings
    # fp16 and back would round the weights: each configuration starts from the loaded ones
    loaded = {k: v.clone() for k, v in embedder.model.state_dict().items()}
    results = []
    for config in args.configs:
        per_call, encode_batch, precision = config.split("/")
        if precision not in ("fp32", "fp16"):
            parser.error(f"--configs {config}: precision is fp32 or fp16")
        embedder.model.float().load_state_dict(loaded)
        if precision == "fp16":
            embedder.model.half()
        embedder.embed_documents(["warm-up"] * 64)   # the new precision's kernels, outside the timings
        for copies in args.copies:
            row = run_config(embedder, articles, copies, int(per_call),
                             None if encode_batch == "default" else int(encode_batch), args.device,
                             args.chunk_size, args.chunk_overlap)
            first = row.pop("_first")
            if args.save_reference and not results:
                np.save(args.save_reference, first)
            if reference is not None and first is not None:
                n = min(len(reference), len(first))
                row["reference_cosine_min"] = float(np.min(np.sum(reference[:n] * first[:n], axis=1)))
                row["reference_max_abs_diff"] = float(np.max(np.abs(reference[:n] - first[:n])))
            row.update(config=config, copies=copies)
            results.append(row)
            print(json.dumps(row), flush=True)
    report = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
              "device": device_name(args.device), "machine": machine(), "software": versions(),
              "model": args.model_label or args.model, "corpus": f"{args.corpus.name}, {len(articles)} articles",
              "note": args.note, "results": results}
    if args.device.startswith("cuda"):
        import torch

        report["torch"] = torch.__version__
        report["gpu_peak_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
