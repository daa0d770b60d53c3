"""The packaged reranker (int8 ONNX) against the cross-encoder it was exported from (float32, torch):
how far quantization moves its scores and the evidence kept, and what each costs per question.

    python bench/reranker_package.py SOURCE_DIR [--packaged multihop-rag-minilm] [--corpus multihop-rag]
        [--limit N] > bench/results/reranker-package-multihop-rag.md

Candidates are metarag's (rules filters, hybrid search, K = 20), as the fused configuration the
README recommends reranks them; both forms rerank the same candidates, fused with the search's
score at the weight the package records (0.5), and keep K' = 10. Both forms were trained on every
development question, so the gold hit rates below are NOT results (the model saw these questions):
they only compare the two forms of one model. The k-fold figures in metarag-reranker-*.md are the
held-out ones. Last, how much the question matters to its scores: the same candidates scored
under other questions.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from environment import describe, machine
from markdown import split_label, table
from tqdm import tqdm

from mhgraph.config import load_settings
from mhgraph.benchmark import load_questions
from mhgraph.eval.runner import gold_matcher
from mhgraph.graph.connection import connect
from mhgraph.rerank.base import rerank
from mhgraph.rerank.models import PACKAGED, load_reranker
from mhgraph.retrieval import build_retriever, registry

DEFAULT_QUESTIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop-rag" / "MultiHopRAG.json"


class Scored:
    """Scores already computed, handed to rerank() for the fusion (the models score once)."""

    name = "scored"

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def score(self, query: str, passages: list[str]) -> list[float]:
        return self.scores


def filtered_hybrid_candidates(corpus: str, questions: list, k: int) -> tuple[dict, dict]:
    """Each question's gold chunk ids and metarag's K candidates (rules filters, hybrid search, no
    reranking): what the rerank benchmarks rerank."""
    settings = load_settings({"corpus": corpus})
    search = registry.options_for(settings, "metarag").model_copy(update={
        "filter_extractor": "rules", "search": "hybrid", "candidates": k, "rerank": False})
    with connect(settings) as driver:
        gold = gold_matcher(driver, settings.neo4j_database, corpus).gold_sets(questions)
        retriever = build_retriever("metarag", driver, settings, corpus=corpus, options=search, questions=questions)
        candidates = {q.id: retriever.search(q.query, top_k=k).hops[0].chunks
                      for q in tqdm(questions, desc="candidates", unit="q")}
    return gold, candidates


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 2 else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="the cross-encoder the package was exported from (e.g. models/reranker-all/all)")
    parser.add_argument("--packaged", default=PACKAGED)
    parser.add_argument("--corpus", default="multihop-rag")
    parser.add_argument("--questions", default=str(DEFAULT_QUESTIONS))
    parser.add_argument("--limit", type=int)
    parser.add_argument("--keep", type=int, default=10)
    args = parser.parse_args(argv)
    questions = load_questions(args.questions, limit=args.limit)
    # the source in float32, as it was trained
    source, packaged = load_reranker(args.source, precision="float32"), load_reranker(args.packaged)
    weight = packaged.rerank_weight
    k = registry.options_for(load_settings({"corpus": args.corpus}), "metarag").candidates
    gold, candidates = filtered_hybrid_candidates(args.corpus, questions, k)
    scored = [q for q in questions if gold.get(q.id) and candidates[q.id]]
    seconds = {"source": [], "packaged": []}
    rho, same_top, same_set, hits = [], [], [], {"source": [], "packaged": []}
    max_diff = []
    for q in tqdm(scored, desc="reranking", unit="q"):
        chunks = candidates[q.id]
        kept = {}
        raw = {}
        for name, model in (("source", source), ("packaged", packaged)):
            started = time.perf_counter()
            raw[name] = model.score(q.query, [c.text for c in chunks])
            seconds[name].append(time.perf_counter() - started)
            kept[name] = [c.chunk_id for c in rerank(Scored(raw[name]), q.query, chunks, args.keep, weight)[0]]
            hits[name].append(any(c in gold[q.id] for c in kept[name][:4]))
        rho.append(spearman(raw["source"], raw["packaged"]))
        max_diff.append(float(np.max(np.abs(np.subtract(raw["source"], raw["packaged"])))))
        same_top.append(kept["source"][:4] == kept["packaged"][:4])
        same_set.append(set(kept["source"]) == set(kept["packaged"]))
    # does the question matter? the same 20 chunks scored under 4 different questions: the mean
    # correlation of the score vectors (1: the question changes nothing)
    dependence = {}
    probes = scored[:4]
    for name, model in (("source", source), ("packaged", packaged)):
        correlations = []
        for q in scored[:10]:
            texts = [c.text for c in candidates[q.id]]
            vectors = [model.score(p.query, texts) for p in probes if p.id != q.id][:3] + [model.score(q.query, texts)]
            matrix = np.corrcoef(np.array(vectors))
            correlations.append(matrix[np.triu_indices(len(vectors), 1)].mean())
        dependence[name] = float(np.mean(correlations))
    size = sum(p.stat().st_size for p in Path(packaged.folder).iterdir()) / 2**20
    source_size = sum(p.stat().st_size for p in Path(args.source).rglob("*") if p.is_file()) / 2**20
    ms = {k: 1000 * float(np.median(v)) for k, v in seconds.items()}
    lines = [f"# The packaged reranker ({args.packaged}) against its float32 source", "",
             f"- questions: {split_label(args.questions)}; {len(scored)} with gold chunks and candidates"
             f"{f' (of the first {args.limit})' if args.limit else ''}",
             f"- date (UTC): {datetime.now(timezone.utc):%Y-%m-%d %H:%M}Z; machine: {describe(machine())}, CPU only",
             f"- candidates: metarag, rules filters, hybrid search, K = {k}; fused at "
             f"weight {weight} with the search's score, K' = {args.keep}",
             f"- source: {args.source} ({source.name}; {source_size:.0f} MB); packaged: {packaged.name} "
             f"({size:.1f} MB, {packaged.description['quantization']})",
             f"- command: python bench/reranker_package.py {args.source}"
             f"{f' --limit {args.limit}' if args.limit else ''}", "",
             "**Both forms were trained on every development question: the hit rates below compare the two forms "
             "of one model; they are not results.**", ""]
    lines += table(["measure", "value"], [
        ["Spearman correlation of the 20 candidates' scores, mean / minimum",
         f"{np.mean(rho):.4f} / {np.min(rho):.4f}"],
        ["largest score difference in a question, median / maximum (scores in 0..1)",
         f"{np.median(max_diff):.4f} / {np.max(max_diff):.4f}"],
        ["questions with the same first 4 after fusion", f"{np.mean(same_top):.1%}"],
        [f"questions with the same {args.keep} kept after fusion", f"{np.mean(same_set):.1%}"],
        ["a gold chunk in the first 4: float32 / int8 (seen in training)",
         f"{np.mean(hits['source']):.3f} / {np.mean(hits['packaged']):.3f}"],
        ["the same 20 candidates scored under 4 different questions, mean correlation of the scores "
         "(10 candidate sets; 1: the question changes nothing): float32 / int8",
         f"{dependence['source']:.3f} / {dependence['packaged']:.3f}"],
        ["reranking 20 candidates, ms per question p50: float32 torch / int8 ONNX Runtime",
         f"{ms['source']:.0f} / {ms['packaged']:.0f}"],
    ])
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
