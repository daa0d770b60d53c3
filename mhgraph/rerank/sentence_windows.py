"""`SentenceWindowReranker`: a training-free rescoring, sentence by sentence.

A multi-hop question asks several things and a gold chunk answers one of them, often in one
sentence; the chunk's own vector averages 256 tokens and the question's averages every part. So a
passage is scored by its best sentence, two ways:

- dense: the highest cosine between a window of the question's words (overlapping runs of 12)
  and one of the passage's sentences, both embedded by the model named;
- lexical: the highest sum, over one sentence, of the inverse document frequencies of the
  question's content words it holds, the frequencies counted over the sentences of the passages
  being scored (the candidates are the collection: a word in many of their sentences counts less).

Each is standardised over the passages and the two are added. No trained part: windows are
counted in words and sentences cut at sentence ends and line breaks, and the content words are
those left when English function words are dropped (`mhgraph/text.py`), not the offline
reasoner's list, which drops words MultiHop-RAG's questions use to name their sources. The
window length and the idf formula were tried on that benchmark's candidates. Fused with the search's score, the
reranker's own weight is 0.7 (`rerank_weight`, as an exported cross-encoder records one), chosen
5-fold by question among 1, 0.7 and 0.5 on MultiHop-RAG's development split
(bench/results/compose-sentences-multihop-rag.md); a pipeline's `rerank_weight` overrides it.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mhgraph.embeddings import load_embedder
from mhgraph.errors import MhgraphError
from mhgraph.rerank.base import standardise
from mhgraph.rerank.kept import KeptPassages
from mhgraph.rerank.sentence_store import SentenceStore
from mhgraph.text import content_words, sentences

SENTENCES = "sentences:"
# 12 words a window, a new one every 6: about a clause of a long question; a question of 12 words
# or fewer is one window, the question itself
WINDOW_WORDS = 12
WINDOW_STEP = 6
# the stores' folder inside the cache folder
STORE_FOLDER = "sentences"


@dataclass(frozen=True)
class Sentences:
    """A passage's sentences, their vectors row by row and each one's content words: what the
    reranker keeps of a passage, so that a chunk scored again is neither embedded nor read again."""

    texts: list[str]
    vectors: np.ndarray
    words: list[frozenset[str]]


def question_windows(question: str, words: int = WINDOW_WORDS, step: int = WINDOW_STEP) -> list[str]:
    """Overlapping runs of `words` words, a new one every `step`; the last reaches the question's end."""
    tokens = question.split()
    if len(tokens) <= words:
        return [" ".join(tokens)] if tokens else []
    starts = list(range(0, len(tokens) - words + 1, step))
    if starts[-1] + words < len(tokens):
        starts.append(len(tokens) - words)
    return [" ".join(tokens[s:s + words]) for s in starts]


def best_sentence_overlap(question: str, passages_sentences: Sequence[Sequence[str]]) -> list[float]:
    """Per passage, its best sentence's sum of the inverse document frequencies of the question's
    content words it holds; frequencies over all the passages' sentences, idf = ln((n + 1) / (df + 0.5))."""
    return _best_overlap(question, [[frozenset(content_words(s)) for s in parts] for parts in passages_sentences])


def _best_overlap(question: str, passages_words: Sequence[Sequence[frozenset[str]]]) -> list[float]:
    """best_sentence_overlap from each sentence's content words."""
    asked = set(content_words(question))
    words = [[asked & held for held in parts] for parts in passages_words]
    n = sum(len(parts) for parts in words)
    frequency = Counter(w for parts in words for held in parts for w in held)
    idf = {w: math.log((n + 1) / (f + 0.5)) for w, f in frequency.items()}
    return [max((sum(idf[w] for w in held) for held in parts), default=0.0) for parts in words]


class SentenceWindowReranker:
    """The dense and the lexical best-sentence scores (module docstring), standardised and added.
    A passage's sentences (cut at sentence ends and line breaks) and their vectors are kept in
    memory, the most recently scored first, up to `keep` sentences (100,000 of 384 floats: about
    150 MB), since a chunk comes back for many questions; and, given a cache folder, on disk
    (`SentenceStore`), where `prepare` embeds a corpus's ahead. A passage without text scores lowest."""

    rerank_weight = 0.7

    def __init__(self, model: str, cache_dir: Path | None = None, *, keep: int = 100_000,
                 store: SentenceStore | None = None) -> None:
        self.embedder = load_embedder(model, cache_dir)
        self.name = f"{SENTENCES}{self.embedder.model_name}"
        self._kept: KeptPassages[Sentences] = KeptPassages(keep, lambda found: len(found.texts))
        # on disk in the cache folder where one is given: a passage is embedded once, not once a
        # process; a folder that cannot be written leaves the reranker working in memory, with a warning
        self.store = store
        self._no_store = "no cache folder was given"
        if store is None and cache_dir is not None:
            try:
                self.store = SentenceStore.for_model(Path(cache_dir) / STORE_FOLDER, self.embedder.model_name)
            except MhgraphError as exc:
                self._store_failed(exc)

    def _store_failed(self, exc: MhgraphError) -> None:
        self.store, self._no_store = None, str(exc)
        warnings.warn(f"{exc}; the sentence reranker keeps its sentences in memory only", stacklevel=3)

    def _embed(self, passages: Sequence[str], *, must_store: bool = False) -> dict[str, tuple[list[str], np.ndarray]]:
        """Each passage's sentences and their vectors, embedded now, and stored where there is a
        store (a store that fails is dropped with a warning, unless `must_store`)."""
        if not passages:
            return {}
        cut = [sentences(p) for p in passages]
        vectors = np.asarray(self.embedder.embed_documents([s for parts in cut for s in parts]), dtype=np.float32)
        embedded, start = {}, 0
        for passage, parts in zip(passages, cut):
            embedded[passage] = (parts, vectors[start:start + len(parts)])
            start += len(parts)
        store = self.store                     # once: another thread may drop a failing store
        if store is not None:
            try:
                store.put(embedded)
            except MhgraphError as exc:
                if must_store:
                    raise
                self._store_failed(exc)
        return embedded

    def prepare(self, passages: Sequence[str]) -> int:
        """Embed and store the sentences of those `passages` the store does not hold yet, so that no
        question pays for them (`mhgraph reranker prepare`); the number embedded."""
        if self.store is None:
            raise MhgraphError(f"reranker '{self.name}' has no sentence store to prepare: {self._no_store}")
        unique = list(dict.fromkeys(passages))
        stored = self.store.held(unique)
        missing = [p for p in unique if p not in stored]
        self._embed(missing, must_store=True)
        return len(missing)

    def _stored(self, passages: Sequence[str]) -> dict[str, tuple[list[str], np.ndarray]]:
        store = self.store
        if store is None:
            return {}
        try:
            return store.get(passages)
        except MhgraphError as exc:
            self._store_failed(exc)
            return {}

    def _sentences(self, passages: Sequence[str]) -> dict[str, Sentences]:
        """Each passage's sentences, their vectors and words: kept in memory, else read from the
        store, else embedded now."""
        return self._kept.take(passages, self._read)

    def _read(self, passages: list[str]) -> dict[str, Sentences]:
        read = self._stored(passages)
        read.update(self._embed([p for p in passages if p not in read]))
        return {p: Sentences(parts, vectors, [frozenset(content_words(s)) for s in parts])
                for p, (parts, vectors) in read.items()}

    def dense(self, query: str, passages: Sequence[str]) -> list[float]:
        """Per passage, the highest cosine between a window of the question and one of its
        sentences (-1, the lowest, for a passage without text)."""
        return self._dense(query, passages, self._sentences(passages))

    def _dense(self, query: str, passages: Sequence[str], found: dict[str, Sentences]) -> list[float]:
        windows = self.embedder.embed_queries(question_windows(query) or [query])
        return [float((found[p].vectors @ windows.T).max()) if found[p].texts else -1.0 for p in passages]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        found = self._sentences(passages)
        dense = self._dense(query, passages, found)
        unique = list(found)          # a passage given twice counts once in the word frequencies
        lexical = dict(zip(unique, _best_overlap(query, [found[p].words for p in unique])))
        return [d + w for d, w in zip(standardise(dense), standardise([lexical[p] for p in passages]))]
