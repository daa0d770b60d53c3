"""TreeHop's query update, in torch: q' = q - c + UpdateGate(q, c) (Li et al., 2025).

From the query embedding q of a branch and the embedding c of the chunk it retrieved, the next
query embedding subtracts what c already covers and adds what an attention of q over c says is
still missing. No text is read or generated between hops: one small matrix product per branch.

UpdateGate is a single-head cross-attention from q to c with learned Q, K and V projections (with
bias). With one vector on each side a softmax over positions would be trivially 1, so, as in the
authors' code, the attention is taken over the embedding's dimensions: the scores are the
element-wise product of the projected q and c, scaled by sqrt(d), normalised with a softmax across
the d dimensions, and weight the projected c dimension by dimension; a linear map (no bias) brings
the result back to the embedding space. Dropout acts on the attention weights in training.

`terms` names which parts of the update are used, for the ablations: all three by default; a model
without "gate" is the arithmetic update q - c and has nothing to learn.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from mhgraph.errors import MhgraphError

TERMS = ("q", "c", "gate")


def kept_terms(terms: tuple[str, ...]) -> tuple[str, ...]:
    """`terms` in TERMS' order, or a one-line error if any is unknown or none is given."""
    unknown = [t for t in terms if t not in TERMS]
    if unknown or not terms:
        raise MhgraphError(f"TreeHop: terms must be a non-empty subset of {', '.join(TERMS)} (got {terms})")
    return tuple(t for t in TERMS if t in terms)


@dataclass(frozen=True)
class TreeHopConfig:
    dimension: int                      # the embedding model's
    dropout: float = 0.1
    terms: tuple[str, ...] = TERMS

    def __post_init__(self) -> None:
        if self.dimension < 1:
            raise MhgraphError(f"TreeHop: the embedding dimension must be positive (got {self.dimension})")
        object.__setattr__(self, "terms", kept_terms(self.terms))

    def to_dict(self) -> dict:
        return {**asdict(self), "terms": list(self.terms)}


class UpdateGate(nn.Module):
    """softmax_d((W_Q q + b_Q) * (W_K c + b_K) / sqrt(d)) * (W_V c + b_V), then W_O."""

    def __init__(self, dimension: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.query = nn.Linear(dimension, dimension)
        self.key = nn.Linear(dimension, dimension)
        self.value = nn.Linear(dimension, dimension)
        self.out = nn.Linear(dimension, dimension, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.scale = 1.0 / math.sqrt(dimension)

    def forward(self, q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        weights = F.softmax(self.query(q) * self.key(c) * self.scale, dim=-1)
        return self.out(self.dropout(weights) * self.value(c))


class TreeHopModel(nn.Module):
    def __init__(self, config: TreeHopConfig) -> None:
        super().__init__()
        self.config = config
        self.gate = UpdateGate(config.dimension, config.dropout) if "gate" in config.terms else None

    @property
    def trainable(self) -> bool:
        return self.gate is not None

    def forward(self, q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """Next query embeddings (L2-normalised) for rows of query and chunk embeddings."""
        if q.shape != c.shape or q.shape[-1] != self.config.dimension:
            raise MhgraphError(f"TreeHop: query {tuple(q.shape)} and chunk {tuple(c.shape)} embeddings must both "
                               f"be (..., {self.config.dimension})")
        out = torch.zeros_like(q)
        if "q" in self.config.terms:
            out = out + q
        if "c" in self.config.terms:
            out = out - c
        if self.gate is not None:
            out = out + self.gate(q, c)
        return F.normalize(out, dim=-1)

    @torch.inference_mode()
    def next_queries(self, q, c) -> "torch.Tensor":
        """forward() in evaluation mode on array-likes: one batched call for every live branch."""
        self.eval()
        return self(torch.as_tensor(q, dtype=torch.float32), torch.as_tensor(c, dtype=torch.float32))

