"""Do the claim graph's names tell a question's gold chunks from the chunks a search ranks beside
them? A record on the graph that graph traversal (`ppr`) walks: bench/results/ppr-bridges-NAME.md and .json.

A walk helps a multi-hop question when its gold chunks, in different documents, are joined by a
name few other chunks hold: the walk then carries mass from one to the other and not elsewhere.
Per question type, over one run's results (its gold chunks by our rule, its top K chunks), it
counts three kinds of chunk pairs and how they are joined in the graph (mhgraph/traversal/
claim_graph.py, read from Neo4j as `ppr` reads it):

- gold - gold: two gold chunks of one question, from different documents;
- gold - near miss: a gold chunk and a chunk of the run's final top K that is not gold, from
  another document than the gold chunk's (chunks of one article share its names);
- random: two chunks of different documents drawn at random from the corpus (seed 0), the
  baseline.

For each: the share sharing a name node (a chunk - name - chunk path), the share joined instead
through one name - name edge (a claim's topic - target, or a synonym), and, where they share one,
how many chunks hold the rarest name they share (quartiles): the fewer, the more the walk keeps
its mass between the two.

  python bench/ppr_bridges.py RUN --corpus multihop-rag --questions FILE --command "..." --out bench/results/ppr-bridges-NAME
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from environment import describe, machine
from markdown import neo4j_server, split_label, table

K = 10
RANDOM_PAIRS = 5000


def joined(names_of: list[set[int]], name_links: list[set[int]], holders: np.ndarray, offset: int,
           a: int, b: int) -> tuple[str, float | None]:
    """How chunks a and b are joined: ('name', holders of the rarest shared name), ('link', None)
    or ('none', None)."""
    shared = names_of[a] & names_of[b]
    if shared:
        return "name", float(min(holders[x - offset] for x in shared))
    reach = set().union(*(name_links[x - offset] for x in names_of[a])) if names_of[a] else set()
    return ("link", None) if reach & names_of[b] else ("none", None)


def final_ranking(hops: list[dict]) -> list[str]:
    """A result's chunk ids as RetrievalResult.final_ranking orders them: each once, best score
    first, ties in retrieval order."""
    best: dict[str, float] = {}
    for h in hops:
        for c in h["chunks"]:
            best[c["chunk_id"]] = max(best.get(c["chunk_id"], float("-inf")), c["score"])
    return sorted(best, key=lambda c: -best[c])      # sorted is stable: ties keep first-seen order


def summarise(pairs: list[tuple[str, float | None]]) -> dict:
    if not pairs:
        return {"pairs": 0}
    rare = [h for kind, h in pairs if kind == "name"]
    quartiles = [float(q) for q in np.percentile(rare, [25, 50, 75])] if rare else None
    return {"pairs": len(pairs), "share_a_name": sum(k == "name" for k, _ in pairs) / len(pairs),
            "joined_through_names": sum(k == "link" for k, _ in pairs) / len(pairs),
            "rarest_shared_name_holders_quartiles": quartiles}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="an eval run folder (its results.json)")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--out", required=True, help="path without suffix: writes .md and .json")
    args = parser.parse_args()

    from mhgraph import cypher
    from mhgraph.config import load_settings
    from mhgraph.graph.connection import connect
    from mhgraph.traversal.claim_graph import ClaimGraph

    settings = load_settings()
    driver = connect(settings)
    graph = ClaimGraph.load(driver, settings.neo4j_database, args.corpus)
    rows, _, _ = driver.execute_query(cypher.load("eval/chunks"), corpus=args.corpus, database_=settings.neo4j_database)
    document = {r["chunk_id"]: r["document_id"] for r in rows}
    offset = len(graph.chunk_ids)
    adjacency = graph.transitions.forward.T.tocsr()      # W: its pattern is the graph's edges
    neighbours = [set(adjacency.indices[adjacency.indptr[i]:adjacency.indptr[i + 1]].tolist())
                  for i in range(graph.size)]
    names_of = [{x for x in neighbours[i] if x >= offset} for i in range(offset)]
    name_links = [{x for x in neighbours[offset + j] if x >= offset} for j in range(len(graph.names))]

    def join(a: str, b: str) -> tuple[str, float | None]:
        return joined(names_of, name_links, graph.chunks_of_name, offset, graph.index[a], graph.index[b])

    results = json.loads((Path(args.run) / "results.json").read_text())
    results = results["questions"] if isinstance(results, dict) else results
    kinds: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        gold = [c for c in dict.fromkeys(r.get("gold") or []) if c in graph.index]
        if not gold:
            continue
        top = final_ranking(r["hops"])[:K]
        pairs: dict[str, list] = defaultdict(list)    # each pair joined once, counted in its type and in all
        for i, a in enumerate(gold):
            for b in gold[i + 1:]:
                if document[a] != document[b]:
                    pairs["gold - gold"].append(join(a, b))
            for b in top:
                if b not in r["gold"] and b in graph.index and document[a] != document[b]:
                    pairs["gold - near miss"].append(join(a, b))
        for group in (r["type"], "all"):
            for kind, joins in pairs.items():
                kinds[group][kind] += joins
    rng = np.random.default_rng(0)
    randoms = []
    while len(randoms) < RANDOM_PAIRS:
        a, b = (graph.chunk_ids[int(i)] for i in rng.choice(offset, 2, replace=False))
        if document[a] != document[b]:
            randoms.append(join(a, b))

    method = json.loads((Path(args.run) / "report.json").read_text()).get("method", "-")
    record = {group: {kind: summarise(pairs) for kind, pairs in by.items()} for group, by in kinds.items()}
    record["random"] = summarise(randoms)
    info = machine()
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%MZ")
    meta = {"run": args.run, "method": method, "run_params": results[0].get("params") if results else None,
            "corpus": args.corpus,
            "graph": {"chunks": offset, "names": len(graph.names), **graph.edges}, "top_k": K, "date": date,
            "machine": info, "command": args.command}
    Path(f"{args.out}.json").write_text(json.dumps({**meta, "pairs": record}, indent=2) + "\n")

    def cells(s: dict) -> list[str]:
        q = s.get("rarest_shared_name_holders_quartiles")
        return [f"{s['pairs']:,}", f"{s['share_a_name']:.2f}", f"{s['joined_through_names']:.2f}",
                " / ".join(f"{x:.0f}" for x in q) if q else "-"]

    header = ["questions", "pairs", "count", "share a name", "joined instead through one name - name edge",
              "chunks holding the rarest shared name (quartiles)"]
    body = [[group, kind, *cells(s)] for group in sorted(kinds, key=lambda g: (g == "all", g))
            for kind, s in record[group].items()]
    body.append(["-", "random (baseline)", *cells(record["random"])])
    lines = [f"# Do the claim graph's names join a question's gold chunks? ({args.corpus})", "",
             (f"- questions: {split_label(args.questions)}; gold chunks by our rule; the near misses are the "
              f"non-gold chunks of the top {K} of run `{Path(args.run).name}` (method `{method}`)"),
             f"- graph: {offset:,} chunks, {len(graph.names):,} Topic and Target names; edges "
             + ", ".join(f"{k} {v:,}" for k, v in graph.edges.items()) + " (as `ppr` reads it)",
             f"- date (UTC): {date}; machine: {describe(info)}; Neo4j {neo4j_server()}",
             f"- command: `{args.command}`", "",
             *table(header, body), ""]
    Path(f"{args.out}.md").write_text("\n".join(lines))
    print(f"written {args.out}.md and .json")


if __name__ == "__main__":
    main()
