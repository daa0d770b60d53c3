"""How near-duplicate Topic / Target names would merge at several thresholds, read-only: the
evidence behind mhgraph/claims/merge.py's DEFAULT_THRESHOLD.

    python bench/claims_merge.py --corpus NAME [--thresholds 0.7 0.75 0.8 0.85 0.9] [--sample 25] > OUT.md

For each label and threshold: how many names merge, and a fixed-seed sample of the merged pairs in
each similarity band, to be read by a person; and a sample of the pairs the lexical guard refuses
(similar embeddings, names apart), to show what similarity alone would merge. Names are embedded
with the corpus's model, as a build does; the graph is not changed.
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np
from environment import describe, machine
from markdown import neo4j_server, table

from mhgraph import cypher
from mhgraph.claims.merge import NAME_LABELS, lexically_close, near_duplicates
from mhgraph.config import load_settings
from mhgraph.graph.connection import connect
from mhgraph.retrieval import question_embedder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.7, 0.75, 0.8, 0.85, 0.9])
    parser.add_argument("--sample", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    settings = load_settings({"corpus": args.corpus})
    lines = [f"# Near-duplicate names in the claim layer of {args.corpus}", "",
             f"- machine: {describe(machine())}; Neo4j {neo4j_server()}",
             f"- command: python bench/claims_merge.py --corpus {args.corpus} --thresholds "
             f"{' '.join(map(str, args.thresholds))} --sample {args.sample}",
             "- read-only: what `mhgraph claims build` / `claims merge` would merge at each threshold "
             "(mhgraph/claims/merge.py: cosine at least the threshold, lexically close, same numbers; "
             "star clustering)", ""]
    rng = random.Random(args.seed)
    with connect(settings) as driver:
        embedder = question_embedder(driver, settings, args.corpus)
        lines[2:2] = [f"- embedding model: {embedder.model_name}"]
        for label in NAME_LABELS:
            records, _, _ = driver.execute_query(cypher.load("claims/names"), label=label, corpus=args.corpus,
                                                 database_=settings.neo4j_database)
            keys = [r["key"] for r in records]
            names = [r["name"] for r in records]
            weights = [r["claims"] for r in records]
            vectors = np.asarray(embedder.embed_documents(names), dtype=np.float32)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            lines += [f"## {label} ({len(records)} names)", ""]
            rows, merged_at = [], {}
            for t in sorted(args.thresholds):
                triples = near_duplicates(keys, vectors, weights, t)
                merged_at[t] = triples
                rows.append([f"{t:.2f}", str(len(triples)), f"{len(triples) / len(records):.1%}"])
            lines += table(["threshold", "names merged", "share"], rows) + [""]
            low = min(args.thresholds)
            bands = sorted(args.thresholds) + [1.0001]
            for lo, hi in zip(bands, bands[1:]):
                pairs = [(names[a], names[k], s) for a, k, s in merged_at[low] if lo <= s < hi]
                shown = sorted(rng.sample(pairs, min(args.sample, len(pairs))), key=lambda p: -p[2])
                lines += [f"Merged pairs with similarity in [{lo:.2f}, {min(hi, 1.0):.2f}): {len(pairs)} "
                          f"(at threshold {low:.2f}); a sample of {len(shown)}:", ""]
                lines += table(["absorbed", "kept", "cosine"], [[a, k, f"{s:.3f}"] for a, k, s in shown]) + [""]
            refused = []
            sims = vectors @ vectors.T if len(records) <= 20_000 else None
            if sims is not None:
                rows_, cols = np.nonzero(np.triu(sims, 1) >= 0.85)
                refused = [(names[i], names[j], float(sims[i, j])) for i, j in zip(rows_.tolist(), cols.tolist())
                           if not lexically_close(keys[i], keys[j])]
            shown = sorted(rng.sample(refused, min(args.sample, len(refused))), key=lambda p: -p[2])
            lines += [f"Pairs at cosine 0.85 or more that the lexical guard keeps apart: {len(refused)}; a sample:", ""]
            lines += table(["name", "name", "cosine"], [[a, b, f"{s:.3f}"] for a, b, s in shown]) + [""]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
