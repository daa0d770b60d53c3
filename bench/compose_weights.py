"""A composed pipeline's rerank stage weighed again from one run's trace, without scoring anything
again: bench/results/compose-weights-NAME.md and .json.

A compose run keeps, for every question, the chunks its rerank stage scored, each one's fused
(search) score and each reranker's own (StageTrace). This re-orders them under other weights and
scores each ordering's top 10 under the official rule:
  - the rerankers' weight against the search score (rerank_weight),
  - one reranker against the other, for a combination of two (mhgraph weighs its parts equally;
    under rank fusion as by_ranks' parts),
  - each expansion's ranking in the reciprocal-rank fusion against the candidates' 1 (METHOD:W),
    in the first fusion and, under rank fusion, in the rerank stage's,
  - shallower pools: the first C candidates and the first E chunks of each expansion, of those
    the run scored: an estimate, since nothing runs again (with share=source a shallower run
    divides its candidates among the sources a little differently, and a method asked for fewer
    chunks may search otherwise: TreeHop keeps as many branches as it returns chunks),
  - the diversify stage after it: at most N chunks of one document among the kept (none: off).
The weights are then chosen k-fold by question (bench/kfold.py's folds): per fold, the weights with
the best official Recall@10 on the other folds, scored on the held-out fold. With a reranker
trained on these questions the choice is in-domain tuning, and labelled so. First the run's own
weights, re-ordered here, are checked against the run's own scores (exact on the pool the run
scored). The run must score its whole pool (rerank=RERANKER:N with N at least the candidates plus
each expansion's chunks): a chunk it did not score is not in the trace.

    python bench/compose_weights.py RUN_DIR --name multihop-rag --questions Q --command "..." \
        --json OUT.json > OUT.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from environment import describe, machine, versions
from kfold import FOLDS, fold_of
from markdown import f, neo4j_server, table

from mhgraph import cypher
from mhgraph.benchmark import load_questions
from mhgraph.compose.diversity import per_document
from mhgraph.compose.fusion import by_ranks
from mhgraph.compose.stages import parse_stages
from mhgraph.config import load_settings
from mhgraph.eval.official import DEPTH, item_text, normalise, score_found
from mhgraph.graph.connection import connect
from mhgraph.retrieval.merge import fused_scores
from mhgraph.retrieval.records import to_chunks
from mhgraph.types import RetrievedChunk

METRICS = ("hits@4", "hits@10", "recall@10")
RERANK_WEIGHTS = (0.5, 0.6, 0.7, 0.8, 1.0)
PART_SHARES = (0.0, 0.25, 0.4, 0.5, 0.6, 0.75, 1.0)        # the first reranker's share of the two
EXPAND_WEIGHTS = (0.5, 1.0, 2.0)
DIVERSIFY = (None, 2, 3)
RANKS_K = (5, 10, 60)                                       # rank fusion's k (rerank_fusion=ranks)
RANK_WEIGHTS = (0.4, 0.5, 0.6, 0.7)                         # the rerankers' share under rank fusion
RANK_PART_SHARES = (0.4, 0.5, 0.6)                          # the first reranker's part of it, for two
RANK_EXPAND_WEIGHTS = (0.5, 0.75, 1.0)                      # each expansion's, under rank fusion (METHOD:W: 0 to 1)
IN_DOMAIN = " (in-domain tuning: the run's reranker or TreeHop was trained on these questions)"
POOL_STEP = 10                                              # shallower pools in steps of this many chunks
SHALLOWEST = 30                                             # ... from this many candidates


@dataclass(frozen=True)
class Weights:
    rerank: float
    share: float | None          # the first reranker's share; None with one reranker
    expand: float | None         # every expansion's fusion weight; None without expansions or under linear fusion
    candidates: int
    expanded: int | None         # each expansion's first E chunks; None without expansions
    diversify: int | None = None  # at most N chunks of one document kept; None: off
    ranks_k: int | None = None    # fused by ranks (rerank_fusion=ranks) with this k; None: by scores

    @property
    def label(self) -> str:
        parts = [f"rerank {self.rerank:g}" + (f" by ranks, k {self.ranks_k}" if self.ranks_k else "")]
        if self.share is not None:
            parts.append(f"first reranker {self.share:g}")
        if self.expand is not None:
            parts.append(f"expansion {self.expand:g}")
        parts.append(f"pool {self.candidates}" + (f"+{self.expanded}" if self.expanded is not None else ""))
        if self.diversify:
            parts.append(f"diversify {self.diversify}")
        return ", ".join(parts)


@dataclass
class Traced:
    """One question's rerank stage as its run traced it."""

    qid: str
    candidates: list[str]
    expansions: list[list[str]]
    scored: list[str]
    chunks: list[RetrievedChunk]  # the scored chunks, with their documents
    search: np.ndarray
    parts: np.ndarray            # rerankers x scored chunks
    present: list[frozenset[str]]  # the gold facts each scored chunk holds (official rule)
    gold: list[str]


def zscore(values: np.ndarray) -> np.ndarray:
    """mhgraph.rerank.base.standardise, over the last axis."""
    spread = values.std(axis=-1, keepdims=True)
    return np.where(spread > 0, (values - values.mean(axis=-1, keepdims=True)) / np.where(spread > 0, spread, 1), 0.0)


def load_traced(run: Path, questions: str, corpus: str) -> tuple[dict, list[Traced], list[str], dict[str, dict]]:
    """(the run's params, each question's traced rerank stage, the rerankers' names, the run's own
    official scores by question), questions with evidence facts only."""
    facts = {q.id: [normalise(e.fact) for e in q.evidence] for q in load_questions(Path(questions)) if q.evidence}
    results = json.loads((run / "results.json").read_text())
    params = results[0]["params"]
    stages = [{s["stage"]: s for s in r["stages"]} for r in results]
    if "rerank" not in stages[0] or "scores" not in stages[0]["rerank"]:
        raise SystemExit(f"error: {run}/results.json: no rerank scores in its trace (a compose run with a reranker, "
                         "made by this mhgraph or later)")
    names = list(stages[0]["rerank"]["scores"]["rerankers"])
    ids = sorted({c for s in stages for c in s["rerank"]["scores"]["chunks"]})
    settings = load_settings({"corpus": corpus})
    with connect(settings) as driver:
        records, _, _ = driver.execute_query(cypher.load("retrieval/chunks_by_id"), rows=[{"id": i, "score": 0.0}
                                                                                            for i in ids],
                                             corpus=corpus, database_=settings.neo4j_database)
    found = {c.chunk_id: c for c in to_chunks(records)}
    texts = {cid: normalise(item_text(c)) for cid, c in found.items()}
    traced, own = [], {}
    for r, s in zip(results, stages):
        if r["id"] not in facts or not r.get("official"):
            continue
        gold = facts[r["id"]]
        scores = s["rerank"]["scores"]
        expansions = [st["chunks"] for name, st in s.items() if name.startswith("expand:")]
        traced.append(Traced(r["id"], s["candidates"]["chunks"], expansions, scores["chunks"],
                             [found[c] for c in scores["chunks"]],
                             np.array(scores["search"], dtype=float),
                             np.array([scores["rerankers"][n] for n in names], dtype=float).reshape(len(names), -1),
                             [frozenset(g for g in gold if g in texts[c]) for c in scores["chunks"]], gold))
        own[r["id"]] = r["official"]
    return params, traced, names, own


def grid(params: dict, traced: list[Traced], names: list[str]) -> list[Weights]:
    expands = bool(traced[0].expansions)
    rrf = parse_stages(params["stages"]).fuse == "rrf"
    deepest = max(len(t.candidates) for t in traced)
    widest = max((len(e) for t in traced for e in t.expansions), default=0)
    pools = sorted({*range(min(SHALLOWEST, deepest), deepest, POOL_STEP), deepest})
    expanded = sorted({*range(POOL_STEP, widest, POOL_STEP), widest}) if expands else [None]
    by_scores = [Weights(w, a if len(names) == 2 else None, e if expands and rrf else None, c, x, d)
                 for w, a, e, c, x, d in itertools.product(RERANK_WEIGHTS, PART_SHARES if len(names) == 2 else [None],
                                                            EXPAND_WEIGHTS if expands and rrf else [None], pools,
                                                            expanded, DIVERSIFY)]
    # by ranks: the first of two rerankers a part of their share (by_ranks' parts), each expansion a weight
    by_ranks = [Weights(w, a, e, c, x, None, k)
                for w, a, e, k, c, x in itertools.product(RANK_WEIGHTS, RANK_PART_SHARES if len(names) == 2 else [None],
                                                          RANK_EXPAND_WEIGHTS if expands and rrf else [None], RANKS_K,
                                                          pools, expanded)]
    return by_scores + by_ranks


def scores_of(t: Traced, weights: list[Weights]) -> np.ndarray:
    """(len(weights), len(METRICS)): the question's official scores under each weighting."""
    out = np.zeros((len(weights), len(METRICS)))
    position = {c: i for i, c in enumerate(t.scored)}
    cache: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for k, w in enumerate(weights):
        key = (w.candidates, w.expanded, w.expand)
        if key not in cache:
            pool = set(t.candidates[:w.candidates])
            for e in t.expansions:
                pool |= set(e[:w.expanded])
            kept = np.array(sorted(position[c] for c in pool if c in position), dtype=int)
            search = t.search[kept]
            if w.expand is not None:          # the reciprocal-rank fusion again, with this expansion weight
                fused = fused_scores([t.candidates[:w.candidates], *(e[:w.expanded] for e in t.expansions)],
                                     weights=[1.0] + [w.expand] * len(t.expansions))
                search = np.array([fused.get(t.scored[i], 0.0) for i in kept])
                order = np.argsort(-search, kind="stable")       # the fused order breaks ties, as in mhgraph
                kept, search = kept[order], search[order]
            cache[key] = (kept, zscore(search), zscore(t.parts[:, kept]))
        kept, search, z = cache[key]
        if not len(kept):
            continue
        if w.ranks_k:
            top = ranked(t, kept, w)
        else:
            combined = z[0] if len(z) == 1 else (w.share * z[0] + (1 - w.share) * z[1] if w.share is not None
                                                 else z.mean(axis=0))
            final = w.rerank * zscore(combined) + (1 - w.rerank) * search if w.rerank < 1 else combined
            top = kept[np.argsort(-final, kind="stable")]
        if w.diversify:
            top = [position[c.chunk_id] for c in per_document([t.chunks[i] for i in top], w.diversify, DEPTH)]
        top = top[:DEPTH]
        score = score_found([t.present[i] for i in top], t.gold)
        out[k] = (score.hits_at_4, score.hits_at_10, score.recall_at_10)
    return out


def ranked(t: Traced, kept: np.ndarray, w: Weights) -> np.ndarray:
    """The pool's positions in the order mhgraph's rank fusion gives them (compose/fusion.py's by_ranks)."""
    position = {c: i for i, c in enumerate(t.scored)}
    rankings = [[RetrievedChunk(c, 0.0, r) for r, c in enumerate(t.candidates[:w.candidates], start=1)],
                *([RetrievedChunk(c, 0.0, r) for r, c in enumerate(e[:w.expanded], start=1)] for e in t.expansions)]
    order = by_ranks([t.chunks[i] for i in kept], {str(j): t.parts[j, kept] for j in range(len(t.parts))},
                     rankings, [1.0] + [w.expand or 1.0] * len(t.expansions), w.rerank, w.ranks_k, len(kept),
                     parts=None if w.share is None else [w.share, 1.0 - w.share])
    return np.array([position[c.chunk_id] for c in order], dtype=int)


def own_weights(params: dict, names: list[str], traced: list[Traced]) -> Weights:
    """The weights the run itself ordered by."""
    stages = parse_stages(params["stages"])
    expands = bool(traced[0].expansions)
    expand = stages.weight(stages.expand[0], float(params.get("expand_weight", 1.0))) if expands else None
    return Weights(float(params["rerank_weight"]), 0.5 if len(names) == 2 else None,
                   expand if expands and stages.fuse == "rrf" else None,
                   max(len(t.candidates) for t in traced),
                   max(len(e) for t in traced for e in t.expansions) if expands else None, stages.diversify,
                   int(params["rerank_rrf_k"]) if params.get("rerank_fusion") == "ranks" else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--name", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    run = Path(args.run)
    params, traced, names, own = load_traced(run, args.questions, args.name)
    weights = grid(params, traced, names)
    mine = own_weights(params, names, traced)
    if mine not in weights:
        weights.append(mine)
    with multiprocessing.Pool(min(2, os.cpu_count() or 1)) as workers:     # the questions apart, on two cores
        # questions x weights x metrics
        scores = np.stack(workers.starmap(scores_of, [(t, weights) for t in traced], chunksize=16))
    mean = scores.mean(axis=0)
    mine_at = weights.index(mine)
    recorded = np.array([[own[t.qid][m] for m in METRICS] for t in traced])
    differ = int((np.abs(scores[:, mine_at] - recorded) > 1e-9).any(axis=1).sum())
    folds = np.array([fold_of(t.qid) for t in traced])
    recall = METRICS.index("recall@10")
    chosen, held = [], np.zeros_like(scores[:, 0])
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        best = int(np.argmax(scores[train][:, :, recall].mean(axis=0)))
        held[test] = scores[test][:, best]
        chosen.append({"fold": k, "chosen": weights[best].label, "questions": int(test.sum()),
                       **{m: float(scores[test][:, best, i].mean()) for i, m in enumerate(METRICS)}})
    order = np.argsort(-mean[:, recall], kind="stable")
    info = machine()
    summary = {
        "name": args.name, "run": str(run), "stages": params["stages"], "rerankers": names,
        "date_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%MZ"), "machine": info,
        "versions": versions(), "command": args.command, "questions": len(traced),
        "reproduced": {"weights": mine.label, "questions_differing": differ,
                       **{m: float(mean[mine_at, i]) for i, m in enumerate(METRICS)},
                       **{f"recorded_{m}": float(recorded[:, i].mean()) for i, m in enumerate(METRICS)}},
        "weightings": [{"weights": weights[j].__dict__, "label": weights[j].label,
                        **{m: float(mean[j, i]) for i, m in enumerate(METRICS)}} for j in order],
        "kfold": {"folds": chosen, **{m: float(held[:, i].mean()) for i, m in enumerate(METRICS)}},
    }
    Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    lines = [f"# The rerank stage weighed again: {args.name}", "",
             f"- run: `{run}` (`{params['stages']}`); rerankers: " + ", ".join(f"`{n}`" for n in names),
             f"- questions: {len(traced)} with evidence facts, official rule (MultiHop-RAG retrieval_evaluate.py); "
             f"weights chosen {FOLDS}-fold by question" + (IN_DOMAIN if "in_domain_trained" in json.dumps(params) else ""),
             f"- date (UTC): {summary['date_utc']}; machine: {describe(info)}; Neo4j {neo4j_server()}",
             f"- command: `{args.command}`", "",
             (f"The run's own weights ({mine.label}) re-ordered here: Recall@10 {f(mean[mine_at, recall])} against "
              f"the run's {f(recorded[:, recall].mean())}; {differ} of {len(traced)} questions score differently "
              "(scores kept to 5 decimals in the trace can tie where the run's did not)."), "",
             f"## The best of {len(weights)} weightings (in-sample)", ""]
    # below the best 15: the best fused by scores (mhgraph's default) and the run's own, where not among them
    by_scores = next(int(j) for j in order if not weights[j].ranks_k)
    shown = [*order[:15], *(j for j in dict.fromkeys([by_scores, mine_at]) if j not in order[:15])]
    rows = [[weights[j].label + (" (the run's)" if j == mine_at else "")
             + (" (the best by scores)" if j == by_scores and j not in order[:15] else ""),
             *(f(mean[j, i]) for i in range(len(METRICS)))] for j in shown]
    lines += table(["weights", *METRICS], rows)
    lines += ["", "## The choice, k-fold by question", "",
              ("Each fold's weights are the ones with the best official Recall@10 on the other folds, scored on the "
               "held-out fold."), ""]
    lines += table(["fold", "chosen", "questions", *METRICS],
                   [[str(c["fold"]), c["chosen"], str(c["questions"]), *(f(c[m]) for m in METRICS)] for c in chosen])
    kfold = ", ".join(f"{m} {f(held[:, i].mean())}" for i, m in enumerate(METRICS))
    theirs = ", ".join(f"{m} {f(mean[mine_at, i])}" for i, m in enumerate(METRICS))
    lines += ["", f"k-fold: {kfold}; the run's own weights: {theirs}",
              "", "## Each lever alone", "",
              "The best in-sample Recall@10 with one setting held at each value (the others free):", ""]
    for field in ("rerank", "share", "expand", "candidates", "expanded", "diversify", "ranks_k"):
        values = sorted({getattr(w, field) for w in weights} - {None})
        if len(values) < 2:
            continue
        best = [max(mean[j, recall] for j, w in enumerate(weights) if getattr(w, field) == v) for v in values]
        lines.append(f"- {field}: " + ", ".join(f"{v:g} -> {f(b)}" for v, b in zip(values, best)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
