"""Near-duplicate Topic and Target names merged by embedding similarity.

Name keys (mhgraph/claims/names.py) already join "The Verge's" and "the verge". What they cannot
join are the same thing written two ways: "Sam Bankman-Fried" and "Bankman-Fried", "Harbor Bank"
and "Harbour Bank", "OpenAI" and "Open AI". Each name is embedded with the corpus's model (kept on
the node as `name_embedding`, so a re-build embeds only new names). Two names merge when

- their cosine similarity is at least the threshold (or their keys differ only in spaces), and
- they are spelled nearly alike, or one's words are all in the other and in no third name (a
  short form with one expansion: "Zuckerberg" joins "Mark Zuckerberg", but "Jones", in "Aaron
  Jones" and "Julio Jones", joins neither). Small name embeddings put distinct entities of one
  kind close together ("Manchester United" and "Manchester City" at 0.87 with all-MiniLM-L6-v2,
  "Sam Bankman-Fried" and "Bankman-Fried" at 0.88), so similarity alone cannot tell them apart; and
- their numbers are the same ("Q3 2023" and "Q4 2023" embed at 0.92).

Merging is star clustering, not chaining: names are taken by how many claims point at them (most
first; of two as common, the longer), and each name not yet merged absorbs the not yet merged names
that pair with it, so a chain of pairs (A ~ B ~ C) never joins A and C through B. The absorbed
node's claims move to the kept node, which records the absorbed names and keys (`aliases`,
`alias_keys`); the absorbed node is deleted. Later builds write a claim whose key is an alias to the
kept node, and claim-bridge retrieval looks question targets up through the same aliases
(`alias_map`).

DEFAULT_THRESHOLD is what bench/claims.sh measured (README, "Claims on MultiHop-RAG").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Sequence

import neo4j
import numpy as np

from mhgraph import cypher
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError

NAME_LABELS = ("Target", "Topic")
DEFAULT_THRESHOLD = 0.80
_DIGITS = re.compile(r"\d+")


@dataclass
class MergeSummary:
    label: str
    names: int                       # nodes before merging
    merged: int                      # nodes absorbed into another
    embedded: int                    # names embedded now (the rest were kept on their nodes)
    examples: list[tuple[str, str, float]] = field(default_factory=list)   # (absorbed, kept, similarity)


def spelled_alike(a: str, b: str) -> bool:
    """Two name keys spelled nearly alike: the same letters apart from spaces ("openai", "open ai")
    or nearly the same characters ("harbor bank", "harbour bank")."""
    return a.replace(" ", "") == b.replace(" ", "") or SequenceMatcher(None, a, b).ratio() >= 0.92


def contained(a: str, b: str) -> bool:
    """One key's words all in the other's ("bankman fried", "sam bankman fried")."""
    words_a, words_b = set(a.split()), set(b.split())
    return words_a <= words_b or words_b <= words_a


def lexically_close(a: str, b: str) -> bool:
    return spelled_alike(a, b) or contained(a, b)


def near_duplicates(keys: Sequence[str], vectors: np.ndarray, weights: Sequence[int], threshold: float,
                    block: int = 2048, touched: set[int] | None = None) -> list[tuple[int, int, float]]:
    """(absorbed, kept, similarity) index triples under star clustering; `vectors` unit-normalised.
    A pair is a candidate when its keys are lexically close with the same numbers, and either its
    cosine similarity is at least `threshold` or the keys differ only in spaces. With `touched`,
    only pairs with one of those names are candidates (the others were decided by an earlier merge)."""
    n = len(keys)
    if n < 2:
        return []
    digits = [tuple(_DIGITS.findall(k)) for k in keys]
    words = [frozenset(k.split()) for k in keys]
    having: dict[str, set[int]] = {}
    for i, ws in enumerate(words):
        for w in ws:
            having.setdefault(w, set()).add(i)

    def unique_expansion(short: int) -> bool:
        """The shorter name's words are in exactly one other name: "Zuckerberg" is short for "Mark
        Zuckerberg" when no other name holds it; "Jones", in "Aaron Jones" and "Julio Jones", is not."""
        holders = set.intersection(*(having[w] for w in words[short])) if words[short] else set()
        return len(holders - {short}) == 1

    def close(i: int, j: int) -> bool:
        if spelled_alike(keys[i], keys[j]):
            return True
        if not contained(keys[i], keys[j]):
            return False
        return unique_expansion(i if len(words[i]) < len(words[j]) else j)

    neighbours: dict[int, dict[int, float]] = {}

    def pair(i: int, j: int, similarity: float) -> None:
        if touched is not None and i not in touched and j not in touched:
            return
        if i != j and digits[i] == digits[j] and close(i, j):
            neighbours.setdefault(i, {})[j] = similarity
            neighbours.setdefault(j, {})[i] = similarity

    for start in range(0, n, block):
        sims = vectors[start:start + block] @ vectors.T
        for r, c in zip(*np.nonzero(sims >= threshold)):
            if start + int(r) < int(c):
                pair(start + int(r), int(c), float(sims[r, c]))
    compact: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        compact.setdefault(key.replace(" ", ""), []).append(i)
    for group in compact.values():
        for i in group[1:]:
            pair(group[0], i, float(vectors[group[0]] @ vectors[i]))
    order = sorted(range(n), key=lambda i: (-weights[i], -len(keys[i]), keys[i]))   # ties: the fuller name keeps
    taken: set[int] = set()
    out = []
    for i in order:
        if i in taken or i not in neighbours:
            continue
        taken.add(i)
        for j, similarity in sorted(neighbours[i].items(), key=lambda p: (-p[1], keys[p[0]])):
            if j not in taken:
                taken.add(j)
                out.append((j, i, similarity))
    return out


def name_vectors(driver: neo4j.Driver, database: str | None, corpus: str, label: str, embedder: TextEmbedder,
                 batch_size: int = 500) -> tuple[list[neo4j.Record], np.ndarray, int]:
    """The `label` nodes of `corpus` (cypher/claims/names.cypher), their name embeddings as unit rows,
    and how many names were embedded now: a name without one is embedded with the corpus's model
    and the vector kept on its node."""
    records, _, _ = driver.execute_query(cypher.load("claims/names"), label=label, corpus=corpus,
                                         database_=database, routing_=neo4j.RoutingControl.READ)
    missing = [r for r in records if r["embedding"] is None]
    fresh: dict[str, list[float]] = {}
    if missing:
        vectors = embedder.embed_documents([r["name"] for r in missing])
        fresh = {r["node"]: [float(x) for x in v] for r, v in zip(missing, vectors)}
        rows = [{"node": node, "embedding": vector} for node, vector in fresh.items()]
        for i in range(0, len(rows), batch_size):
            driver.execute_query(cypher.load("claims/set_name_embeddings"), rows=rows[i:i + batch_size],
                                 database_=database)
    if not records:
        return [], np.zeros((0, embedder.dimensions), dtype=np.float32), 0
    vectors = np.array([fresh.get(r["node"]) or r["embedding"] for r in records], dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return list(records), vectors, len(missing)


def merge_near_duplicates(driver: neo4j.Driver, database: str | None, corpus: str, label: str,
                          embedder: TextEmbedder, threshold: float = DEFAULT_THRESHOLD,
                          batch_size: int = 500, only_new: bool = False) -> MergeSummary:
    """Merge the near-duplicate `label` nodes (Target or Topic) of `corpus`; see the module text.
    only_new: only pairs with a name not embedded before (new since the last merge, as after an
    ingest replaced documents)."""
    if label not in NAME_LABELS:
        raise MhgraphError(f"names are merged for {' and '.join(NAME_LABELS)} nodes, not {label!r}")
    if not 0.0 < threshold <= 1.0:
        raise MhgraphError(f"merge threshold must be above 0 and at most 1, got {threshold}")
    records, vectors, embedded = name_vectors(driver, database, corpus, label, embedder, batch_size)
    if not records:
        return MergeSummary(label, 0, 0, 0)
    touched = {i for i, r in enumerate(records) if r["embedding"] is None} if only_new else None
    triples = near_duplicates([r["key"] for r in records], vectors, [r["claims"] for r in records], threshold,
                              touched=touched)
    pairs = [{"absorbed": records[j]["node"], "kept": records[i]["node"]} for j, i, _ in triples]
    for i in range(0, len(pairs), batch_size):
        driver.execute_query(cypher.load("claims/merge_names"), pairs=pairs[i:i + batch_size], database_=database)
    examples = [(records[j]["name"], records[i]["name"], round(s, 3)) for j, i, s in triples]
    return MergeSummary(label, len(records), len(triples), embedded, examples)


def merge_all(driver: neo4j.Driver, database: str | None, corpus: str, embedder: TextEmbedder,
              threshold: float = DEFAULT_THRESHOLD, only_new: bool = False) -> list[MergeSummary]:
    """Targets, then Topics, of `corpus` merged (what `claims build` ends with and `claims merge` runs)."""
    return [merge_near_duplicates(driver, database, corpus, label, embedder, threshold, only_new=only_new)
            for label in NAME_LABELS]


def alias_map(driver: neo4j.Driver, database: str | None, corpus: str, label: str = "Target") -> dict[str, str]:
    """Absorbed key -> kept key, for `label` nodes of `corpus`."""
    if label not in NAME_LABELS:
        raise MhgraphError(f"aliases are kept for {' and '.join(NAME_LABELS)} nodes, not {label!r}")
    records, _, _ = driver.execute_query(cypher.load("claims/alias_keys"), label=label, corpus=corpus,
                                         database_=database, routing_=neo4j.RoutingControl.READ)
    return {r["alias"]: r["key"] for r in records}
