"""MHTS's construction (answer-first): claims clustered by embedding, multi-hop claims composed
per cluster, and composed again one level up.

1. The claims' stored embeddings (the corpus's model) are reduced by PCA and fitted with a Gaussian
   mixture (scikit-learn, diagonal covariances); a claim joins every component whose posterior is
   at least `theta`, so clusters overlap.
2. Level 1: inside a cluster, two claims of different articles that share their bridge-target make
   a multi-hop claim whose answer is that target.
3. Level 2: the level-1 claims are embedded as the mean of their claims, clustered again, and two
   of one level-2 cluster that reach the same target through four different articles are joined
   (three or four pieces after duplicates).
4. The question is written from the multi-hop claim (by a model, or from the templates), then the
   claim is decomposed into pieces that are mapped back to chunks (mhgraph/generate/pipeline.py).

Level-1 and level-2 candidates are interleaved by the hop shares of the requested range. The
number of components is ~ sqrt(claims / 2) unless given, so clusters hold a few hundred claims.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import neo4j
import numpy as np

from mhgraph.generate.candidate import INFERENCE, MHTS, Candidate
from mhgraph.generate.groups import HOP_SHARES
from mhgraph.generate.kinds import EntityKinds
from mhgraph.generate.pool import ClaimPool

PCA_DIMENSIONS = 32
MAX_CLAIMS = 20000      # claims clustered at most (a seeded sample beyond it)
MAX_FIT = 10000         # claims the mixture is fitted on (all are then assigned)


def mixture_clusters(vectors: np.ndarray, components: int, theta: float, seed: int) -> list[list[int]]:
    """Row indices per mixture component, a row in every component whose posterior >= theta."""
    from sklearn.decomposition import PCA
    from sklearn.mixture import GaussianMixture

    components = max(1, min(components, len(vectors)))
    dims = min(PCA_DIMENSIONS, vectors.shape[1], len(vectors))
    reduced = PCA(n_components=dims, random_state=seed).fit_transform(vectors)
    rng = np.random.default_rng(seed)
    fit_rows = rng.choice(len(reduced), size=min(MAX_FIT, len(reduced)), replace=False)
    mixture = GaussianMixture(n_components=components, covariance_type="diag", random_state=seed, max_iter=100,
                              reg_covar=1e-4).fit(reduced[np.sort(fit_rows)])
    posterior = mixture.predict_proba(reduced)
    return [np.flatnonzero(posterior[:, k] >= theta).tolist() for k in range(components)]


def auto_components(n: int) -> int:
    return max(2, round(np.sqrt(n / 2)))


class ClaimTrees:
    def __init__(self, pool: ClaimPool, kinds: EntityKinds, seed: int, *, driver: neo4j.Driver,
                 database: str | None, hops: tuple[int, int] = (2, 4), components: int | None = None,
                 theta: float = 0.1) -> None:
        self.pool, self.kinds, self.seed, self.hops, self.theta = pool, kinds, seed, hops, theta
        rng = np.random.default_rng([seed, 77])
        ids = sorted(i for i, c in pool.claims.items() if c.target_key)
        if len(ids) > MAX_CLAIMS:
            ids = sorted(rng.choice(ids, size=MAX_CLAIMS, replace=False).tolist())
        self.ids = ids
        # no more components than claims (what the mixture is fitted with, and what the note reports)
        self.components = max(1, min(components or auto_components(len(ids)), len(ids)))
        self.vectors = pool.claim_vectors(driver, database, ids) if ids else np.zeros((0, 1), dtype=np.float32)
        self.clusters = mixture_clusters(self.vectors, self.components, theta, seed) if len(ids) >= 2 else []

    def _pair(self, rows: list[int], rng: np.random.Generator) -> list[tuple[str, str, str]]:
        """(claim, claim, target key): per shared target in these rows, two claims of different
        articles with verbatim facts."""
        by_target: dict[str, dict[str, str]] = defaultdict(dict)
        for r in rows:
            claim = self.pool.claims[self.ids[r]]
            by_target[claim.target_key].setdefault(claim.document_id, claim.id)
        pairs = []
        for key in sorted(by_target):
            docs = sorted(by_target[key])
            if len(docs) < 2:
                continue
            order = rng.permutation(len(docs))
            with_fact = [by_target[key][docs[i]] for i in order if self.pool.fact(by_target[key][docs[i]])]
            if len(with_fact) >= 2:
                pairs.append((with_fact[0], with_fact[1], key))
        return pairs

    def level_one(self) -> list[Candidate]:
        rng = np.random.default_rng([self.seed, 1])
        seen: set[tuple[str, str]] = set()
        out = []
        for k, rows in enumerate(self.clusters):
            for a, b, key in self._pair(rows, rng):
                if (a, b) in seen:        # clusters overlap: a pair found twice is one candidate
                    continue
                seen.add((a, b))
                target = self.pool.claims[a].target
                out.append(Candidate(MHTS, INFERENCE, (a, b), f"cluster:1/{k}", target,
                                     extra={"level": 1, "cluster": k,
                                            "tree": {"level": 1, "cluster": k, "claims": [a, b]}}))
        return [out[i] for i in rng.permutation(len(out))]

    def level_two(self, level_one: list[Candidate]) -> list[Candidate]:
        if len(level_one) < 4:
            return []
        rng = np.random.default_rng([self.seed, 2])
        index = {cid: r for r, cid in enumerate(self.ids)}
        vectors = np.asarray([self.vectors[[index[c] for c in cand.claims]].mean(axis=0) for cand in level_one])
        clusters = mixture_clusters(vectors, auto_components(len(level_one)), self.theta, self.seed)
        out, seen = [], set()
        for k, rows in enumerate(clusters):
            by_target: dict[str, list[Candidate]] = defaultdict(list)
            for r in rows:
                by_target[self.pool.claims[level_one[r].claims[0]].target_key].append(level_one[r])
            for key in sorted(by_target):
                group = by_target[key]
                for i in range(len(group)):
                    for j in range(i + 1, len(group)):
                        claims = tuple(dict.fromkeys(group[i].claims + group[j].claims))
                        docs = {self.pool.claims[c].document_id for c in claims}
                        if len(docs) < 3 or len(docs) != len(claims) or frozenset(claims) in seen:
                            continue
                        seen.add(frozenset(claims))
                        target = self.pool.claims[claims[0]].target
                        out.append(Candidate(MHTS, INFERENCE, claims, f"cluster:2/{k}", target,
                                             extra={"level": 2, "cluster": k,
                                                    "tree": {"level": 2, "cluster": k,
                                                             "children": [group[i].extra["tree"],
                                                                          group[j].extra["tree"]]}}))
                        break
        return [out[i] for i in rng.permutation(len(out))]

    def candidates(self) -> Iterator[Candidate]:
        """Level-1 (two hops) and level-2 (three or four) candidates, interleaved by hop shares."""
        low, high = self.hops
        first = self.level_one()
        one = first if low <= 2 <= high else []
        two = self.level_two(first) if high >= 3 else []
        two = [c for c in two if low <= len(c.claims) <= high]
        share_one = HOP_SHARES[2] / sum(HOP_SHARES.values()) if one and two else (1.0 if one else 0.0)
        rng = np.random.default_rng([self.seed, 3])
        i = j = 0
        while i < len(one) or j < len(two):
            if j >= len(two) or (i < len(one) and rng.random() < share_one):
                yield self._with_kind(one[i])
                i += 1
            else:
                yield self._with_kind(two[j])
                j += 1

    def _with_kind(self, candidate: Candidate) -> Candidate:
        """The target's kind, read when a candidate is used (thousands are made, few are asked)."""
        claim = self.pool.claims[candidate.claims[0]]
        candidate.extra["kind"] = self.kinds(claim.target or "", claim.text)
        return candidate
