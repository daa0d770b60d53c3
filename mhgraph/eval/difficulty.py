"""MHTS difficulty of a question: D = h - lambda * s.

h is the number of evidence facts of the question, s the mean cosine similarity between the
question's embedding and the embeddings of its gold chunks, lambda = 1 as in MHTS unless given
(mhgraph.eval.calibration fits it on a scored run). More facts make a question
harder; evidence that looks like the question makes it easier. D is undefined (None) for a question
without gold chunks (null questions, or facts that matched no chunk). s depends on the embedding
model, so difficulties are comparable only when computed with one model; compute them once per
question set and reuse them for every method.

Bins: fixed half-unit edges on D, `DIFFICULTY_EDGES` = 0.0, 0.5, ..., 4.0, giving the bins
[0,0.5), [0.5,1), ..., [3.5,4), plus `<0` and `>=4` for values outside. With s in
(0, 1], D lies in [h-1, h), so whole-unit edges would only reproduce h; half-unit edges split each
h in two: the upper half of [h-1, h) holds the questions whose gold chunks are on average less
similar to the question than 0.5. Fixed edges keep the bins the same across runs and methods.
`quantile_edges` gives equal-count edges instead, for a question set whose D values crowd a few bins;
`report_edges` uses them (five bins) for any lambda but 1, whose D no longer lies in [h-1, h).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

LAMBDA = 1.0
DIFFICULTY_EDGES: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)


@dataclass(frozen=True)
class Difficulty:
    hops: int            # h: evidence facts
    similarity: float    # s: mean cosine(question, gold chunk)
    value: float         # D = h - lambda * s
    similarity_weight: float = LAMBDA  # lambda


def cosine_similarities(query_vector: Sequence[float], chunk_vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """Cosine similarity of the query with each chunk (zero vectors give 0)."""
    q = np.asarray(query_vector, dtype=np.float64)
    c = np.asarray(chunk_vectors, dtype=np.float64).reshape(-1, q.shape[0])
    norms = np.linalg.norm(c, axis=1) * np.linalg.norm(q)
    dots = c @ q
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def difficulty(
    hops: int,
    query_vector: Sequence[float],
    gold_vectors: Sequence[Sequence[float]],
    lam: float = LAMBDA,
) -> Difficulty | None:
    """D = h - lam * mean cosine(question, gold chunks); None when there are no gold chunks."""
    if len(gold_vectors) == 0:
        return None
    s = float(cosine_similarities(query_vector, gold_vectors).mean())
    return Difficulty(hops, s, hops - lam * s, lam)


def difficulties(
    hops: Mapping[str, int],
    gold: Mapping[str, Sequence[str]],
    query_vectors: Mapping[str, Sequence[float]],
    chunk_vectors: Mapping[str, Sequence[float]],
    lam: float = LAMBDA,
) -> dict[str, Difficulty]:
    """Difficulty per question id (questions without gold chunks are left out).

    `hops`: question id -> h; `gold`: question id -> gold chunk ids; vectors by question / chunk id.
    """
    out = {}
    for qid, chunk_ids in gold.items():
        d = difficulty(hops[qid], query_vectors[qid], [chunk_vectors[c] for c in chunk_ids], lam)
        if d is not None:
            out[qid] = d
    return out


def bin_labels(edges: Sequence[float] = DIFFICULTY_EDGES) -> list[str]:
    """Every bin's label, easiest first."""
    inner = [f"[{a:.3g},{b:.3g})" for a, b in zip(edges, edges[1:])]
    return [f"<{edges[0]:.3g}", *inner, f">={edges[-1]:.3g}"]


def bin_label(value: float, edges: Sequence[float] = DIFFICULTY_EDGES) -> str:
    """The label of the bin [edges[i], edges[i+1]) holding `value`."""
    return bin_labels(edges)[bisect.bisect_right(list(edges), value)]


def report_edges(values: Iterable[float], similarity_weight: float = LAMBDA, bins: int = 5) -> tuple[float, ...]:
    """The bins a report groups D by: the fixed half-unit edges for lambda = 1, else equal-count ones."""
    if similarity_weight == LAMBDA:
        return DIFFICULTY_EDGES
    data = list(values)
    return quantile_edges(data, bins) if data else DIFFICULTY_EDGES


def quantile_edges(values: Iterable[float], bins: int = 4) -> tuple[float, ...]:
    """Edges putting about the same number of values in each of `bins` bins.

    The last edge is nudged just above the largest value so that it falls inside the last bin;
    repeated quantiles collapse, so heavy ties give fewer bins.
    """
    data = np.asarray(list(values), dtype=np.float64)
    if data.size == 0 or bins < 1:
        raise ValueError("quantile_edges needs at least one value and one bin")
    edges = sorted({float(x) for x in np.quantile(data, np.linspace(0, 1, bins + 1))})
    edges[-1] = float(np.nextafter(edges[-1], np.inf))
    return tuple(edges)
