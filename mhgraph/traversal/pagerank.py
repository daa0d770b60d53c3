"""Personalized PageRank by power iteration over a scipy sparse matrix.

The walk follows an edge with probability `damping` (in proportion to the edge weights of the node
it stands on) and otherwise jumps back to a seed, drawn from `reset`:

    p = (1 - damping) * reset + damping * (W^T p + dangling(p) * reset)

where W is the adjacency row-normalised and a node without edges sends its mass back to the seeds
(igraph's and HippoRAG 2's convention). With damping 0.5 the error halves each step, so a few
dozen products of a sparse matrix and a vector converge to 1e-10.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mhgraph.errors import MhgraphError


@dataclass(frozen=True)
class Transitions:
    """A weighted undirected graph as the walk reads it: W^T (column-stochastic where a node has
    edges) and the mask of nodes without edges."""

    forward: sp.csr_matrix        # W^T
    dangling: np.ndarray          # bool per node

    @classmethod
    def from_adjacency(cls, adjacency: sp.spmatrix) -> Transitions:
        a = sp.csr_matrix(adjacency, dtype=np.float64)
        if a.shape[0] != a.shape[1]:
            raise MhgraphError(f"adjacency must be square, got {a.shape}")
        if a.nnz and a.data.min() < 0:
            raise MhgraphError("edge weights must not be negative")
        strength = np.asarray(a.sum(axis=1)).ravel()
        inverse = np.divide(1.0, strength, out=np.zeros_like(strength), where=strength > 0)
        return cls(sp.csr_matrix((sp.diags(inverse) @ a).T), strength <= 0)

    @property
    def size(self) -> int:
        return self.forward.shape[0]


def personalized_pagerank(transitions: Transitions, reset: np.ndarray, damping: float = 0.5,
                          tolerance: float = 1e-10, max_iterations: int = 200) -> tuple[np.ndarray, int]:
    """(scores summing to 1, iterations used) of the walk restarting at `reset` (any non-negative
    weights, normalised here)."""
    if not 0.0 <= damping < 1.0:
        raise MhgraphError(f"damping must be in [0, 1), got {damping}")
    r = np.asarray(reset, dtype=np.float64)
    if r.shape != (transitions.size,):
        raise MhgraphError(f"reset has {r.shape} entries, the graph {transitions.size} nodes")
    if (r < 0).any() or r.sum() <= 0:
        raise MhgraphError("reset weights must be non-negative with a positive sum")
    r = r / r.sum()
    p = r.copy()
    for iteration in range(1, max_iterations + 1):
        lost = p[transitions.dangling].sum()
        nxt = (1.0 - damping) * r + damping * (transitions.forward @ p + lost * r)
        delta = np.abs(nxt - p).sum()
        p = nxt
        if delta < tolerance:
            return p, iteration
    return p, max_iterations
