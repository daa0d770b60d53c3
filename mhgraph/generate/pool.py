"""What question synthesis reads of one corpus: its documents, chunks and claim layer, loaded once.

Claims are grouped by their bridge-target and bridge-topic; a claim's fact (the verbatim sentence
of its chunk that says it, mhgraph/generate/facts.py) is found when first asked for and kept.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import neo4j
import numpy as np

from mhgraph import cypher
from mhgraph.eval.gold import normalise
from mhgraph.generate.facts import Sentence, best_sentence, sentences


@dataclass(frozen=True)
class Document:
    id: str
    title: str | None
    author: str | None
    url: str | None
    category: str | None
    published_at: datetime | None
    source: str | None

    def evidence(self, fact: str) -> dict[str, Any]:
        """One item of a MultiHop-RAG evidence_list (fields in the benchmark's order)."""
        return {"title": self.title or "", "author": self.author or "", "url": self.url or "",
                "source": self.source or "", "category": self.category or "",
                "published_at": self.published_at.isoformat() if self.published_at else "", "fact": fact}


@dataclass(frozen=True)
class ClaimRecord:
    id: str
    text: str
    chunk_id: str
    document_id: str
    target_key: str | None
    target: str | None
    topic_key: str | None
    topic: str | None


@dataclass
class ClaimPool:
    corpus: str
    documents: dict[str, Document]
    chunk_ids: list[str]
    chunk_text: dict[str, str]
    chunk_document: dict[str, str]
    chunk_vectors: np.ndarray            # rows in chunk_ids order, L2-normalised
    claims: dict[str, ClaimRecord]
    by_target: dict[str, list[str]] = field(default_factory=dict)
    by_topic: dict[str, list[str]] = field(default_factory=dict)
    _facts: dict[str, str | None] = field(default_factory=dict)
    _sentences: dict[str, list[Sentence]] = field(default_factory=dict)
    _all_text: str | None = None
    _sentence_documents: dict[str, set[str]] | None = None

    @classmethod
    def load(cls, driver: neo4j.Driver, database: str | None, corpus: str) -> ClaimPool:
        read = neo4j.RoutingControl.READ
        docs, _, _ = driver.execute_query(cypher.load("generate/documents"), corpus=corpus, database_=database,
                                          routing_=read)
        documents = {r["id"]: Document(r["id"], r["title"], r["author"], r["url"], r["category"],
                                       _native(r["published_at"]), r["source"]) for r in docs}
        rows, _, _ = driver.execute_query(cypher.load("generate/chunks"), corpus=corpus, database_=database,
                                          routing_=read)
        chunk_ids = [r["id"] for r in rows]
        vectors = _unit([r["embedding"] for r in rows]) if rows else np.zeros((0, 1))
        claim_rows, _, _ = driver.execute_query(cypher.load("generate/claims"), corpus=corpus, database_=database,
                                                routing_=read)
        claims = {r["id"]: ClaimRecord(r["id"], r["text"], r["chunk_id"], r["document_id"], r["target_key"],
                                       r["target"], r["topic_key"], r["topic"]) for r in claim_rows}
        pool = cls(corpus, documents, chunk_ids, {r["id"]: r["text"] for r in rows},
                   {r["id"]: r["document_id"] for r in rows}, vectors, claims)
        by_target: dict[str, list[str]] = defaultdict(list)
        by_topic: dict[str, list[str]] = defaultdict(list)
        for claim in claims.values():
            if claim.target_key:
                by_target[claim.target_key].append(claim.id)
            if claim.topic_key:
                by_topic[claim.topic_key].append(claim.id)
        pool.by_target, pool.by_topic = dict(by_target), dict(by_topic)
        return pool

    def claim_vectors(self, driver: neo4j.Driver, database: str | None, ids: list[str]) -> np.ndarray:
        """The stored embeddings of `ids`, L2-normalised, in that order."""
        found: dict[str, list[float]] = {}
        for start in range(0, len(ids), 5000):
            rows, _, _ = driver.execute_query(cypher.load("generate/claim_embeddings"), ids=ids[start:start + 5000],
                                              database_=database, routing_=neo4j.RoutingControl.READ)
            found.update((r["id"], r["embedding"]) for r in rows)
        return _unit([found[i] for i in ids])

    # -- metadata the question types need ------------------------------------------------------
    @property
    def has_sources(self) -> bool:
        return any(d.source for d in self.documents.values())

    @property
    def has_dates(self) -> bool:
        return any(d.published_at for d in self.documents.values())

    @functools.cached_property
    def chunk_row(self) -> dict[str, int]:
        """A chunk's row in chunk_vectors."""
        return {c: i for i, c in enumerate(self.chunk_ids)}

    @functools.cached_property
    def word_idf(self) -> dict[str, float]:
        """Each lower-case word's inverse document frequency over the chunks (how rare a clue is)."""
        counts: Counter[str] = Counter()
        for text in self.chunk_text.values():
            counts.update(set(re.findall(r"\w+", text.lower())))
        n = max(len(self.chunk_text), 1)
        return {w: math.log(n / c) for w, c in counts.items()}

    def document_of(self, claim_id: str) -> Document:
        return self.documents[self.claims[claim_id].document_id]

    def mentions(self, name: str) -> bool:
        """Whether any chunk or any claim's target holds `name` (normalised, as gold matching does)."""
        if self._all_text is None:
            self._all_text = "\n".join(normalise(t) for t in self.chunk_text.values())
            self._all_text += "\n" + "\n".join(normalise(c.target or "") for c in self.claims.values())
        return normalise(name) in self._all_text

    # -- facts ---------------------------------------------------------------------------------
    def fact(self, claim_id: str) -> str | None:
        """The sentence of the claim's chunk that says it, verbatim (None: no sentence does, or
        that sentence recurs in another article and so cannot single out its own)."""
        if claim_id not in self._facts:
            claim = self.claims[claim_id]
            found = best_sentence(claim.text, self._chunk_sentences(claim.chunk_id))
            self._facts[claim_id] = found.text if found and not self.repeated(found.text) else None
        return self._facts[claim_id]

    def repeated(self, fact: str) -> bool:
        """Whether `fact` is a sentence of more than one article: boilerplate ("Sign up for our
        newsletter") or syndicated text, which cannot single out the article a question asks about."""
        if self._sentence_documents is None:
            found: dict[str, set[str]] = defaultdict(set)
            for chunk, document in self.chunk_document.items():
                for sentence in self._chunk_sentences(chunk):
                    found[normalise(sentence.text)].add(document)
            self._sentence_documents = dict(found)
        return len(self._sentence_documents.get(normalise(fact), ())) > 1

    def map_piece(self, piece: str, chunk_ids: list[str]) -> tuple[str, str] | None:
        """(chunk id, verbatim sentence) of the chunk among `chunk_ids` whose sentence best holds
        `piece` (a model's evidence piece), or None: a piece that maps to no chunk is dropped."""
        pairs = [(chunk, sentence) for chunk in chunk_ids for sentence in self._chunk_sentences(chunk)]
        found = best_sentence(piece, [sentence for _, sentence in pairs])   # the earlier chunk on ties
        if found is None:
            return None
        return next(chunk for chunk, sentence in pairs if sentence is found), found.text

    def _chunk_sentences(self, chunk: str) -> list[Sentence]:
        """A chunk's sentences, split once."""
        if chunk not in self._sentences:
            self._sentences[chunk] = sentences(self.chunk_text.get(chunk, ""))
        return self._sentences[chunk]


def _unit(rows) -> np.ndarray:
    """Rows as float32 vectors of length 1 (a zero vector stays zero)."""
    vectors = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def _native(value: Any) -> datetime | None:
    if value is None:
        return None
    if hasattr(value, "to_native"):
        return value.to_native()
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None
