"""MultiHop-RAG's construction: claims from different articles joined by a shared bridge-target or
bridge-topic, 2 to 4 per group, one question per group by type.

- inference: claims of 2-4 articles that share a bridge-target; the answer is the target.
- comparison: "do these reports concern the same <kind>?" Yes from a shared bridge-target; No from
  a shared bridge-topic whose claims name different targets of one kind (so the answer needs both).
- temporal (needs published dates): claims of articles published on different days that share a
  target; with two, "was the first reported before the second?" (Yes/No, order drawn at random);
  with three or four from distinct sources, "which source reported first?".
- null: a plausible question about an entity the corpus does not hold: a name of the target's
  kind spliced from two real names (first word of one, last of another) and checked absent from
  every chunk; the group's claims supply its wording, not evidence.

Which articles of a bridge make a group (`grouping`): "story" draws the first at random and then, one
at a time, the article whose claim's chunk reads closest to those chosen (the chunks' embeddings), so
the claims share a story as MultiHop-RAG's do (the reports of one trial, one launch), not only a name
that hundreds of unrelated reports mention. An article joins only when its chunk is at least as close
to the story's as the `coherence` (0.9) quantile of random pairs of chunks from different articles; up
to five first articles are tried, and a name whose articles reach no such story makes no group (so
groups of 3-4 articles are rarer than with "random"). Null questions, whose claims only word them, and
"No" comparisons, joined by a topic, draw as before. "random" draws any articles that share the bridge.

Hop counts are drawn with MultiHop-RAG's published shares (2: 1,079, 3: 778, 4: 398 questions),
restricted to the requested range and to what a group holds. Everything is drawn from one seeded
generator over sorted keys, so a seed gives the same candidates.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterator

import numpy as np

from mhgraph.generate.candidate import (
    COMPARISON,
    INFERENCE,
    MULTIHOP_RAG,
    NULL,
    NULL_ANSWER,
    TEMPORAL,
    Candidate,
)
from mhgraph.generate.kinds import EntityKinds
from mhgraph.generate.pool import ClaimPool

HOP_SHARES = {2: 1079, 3: 778, 4: 398}
MIN_NAME_CHARS = 3
FAKE_KINDS = ("person", "organisation", "product")
STORY_STARTS = 5      # first articles story grouping tries per bridge before it gives the bridge up


def draw_hops(rng: np.random.Generator, low: int, high: int) -> int:
    choices = [h for h in HOP_SHARES if low <= h <= high] or [low]
    weights = np.asarray([HOP_SHARES.get(h, 1) for h in choices], dtype=float)
    return int(rng.choice(choices, p=weights / weights.sum()))


class BridgeGroups:
    def __init__(self, pool: ClaimPool, kinds: EntityKinds, seed: int, hops: tuple[int, int] = (2, 4),
                 max_topic_share: float = 0.02, grouping: str = "story", coherence: float = 0.9) -> None:
        self.pool, self.kinds, self.hops, self.grouping = pool, kinds, hops, grouping
        self.seed, self.coherence = seed, coherence
        documents = max(len(pool.documents), 1)
        # a topic that half the corpus shares ("said") joins nothing: keep the specific ones
        self.max_topic_documents = max(10, int(max_topic_share * documents))
        self.targets = sorted(k for k, ids in pool.by_target.items() if self._documents(ids) >= 2
                              and len(pool.claims[ids[0]].target or "") >= MIN_NAME_CHARS)
        self.topics = sorted(k for k, ids in pool.by_topic.items()
                             if 2 <= self._documents(ids) <= self.max_topic_documents)

    def _documents(self, ids: list[str]) -> int:
        return len({self.pool.claims[i].document_id for i in ids})

    def _rng(self, salt: str) -> np.random.Generator:
        """One generator per type, so asking for more of one type does not change another's."""
        return np.random.default_rng([self.seed, *salt.encode()])

    def _per_document(self, ids: list[str], rng: np.random.Generator) -> dict[str, list[str]]:
        """The claims with a verbatim fact, by document, each list in drawn order."""
        docs: dict[str, list[str]] = defaultdict(list)
        for i in ids:
            docs[self.pool.claims[i].document_id].append(i)
        out = {}
        for doc in sorted(docs):
            claims = [docs[doc][j] for j in rng.permutation(len(docs[doc]))]
            with_fact = [c for c in claims if self.pool.fact(c)]
            if with_fact:
                out[doc] = with_fact
        return out

    def _pick(self, key: str, rng: np.random.Generator, hops: int, *, dated: bool = False,
              story: bool = True) -> list[str] | None:
        """One claim from each of `hops` documents sharing target `key` (published on different days
        when `dated`), or None when the target has too few; of one story under story grouping (`story`
        False: any, for a null question, whose claims only word it)."""
        docs = self._per_document(self.pool.by_target[key], rng)
        marks: dict[str, set[tuple[str, object]]] = {}
        if dated:
            docs = {d: c for d, c in docs.items() if self.pool.documents[d].published_at is not None}
            for d in docs:
                document = self.pool.documents[d]
                marks[d] = {("day", document.published_at.date())}
                if hops >= 3 and document.source:   # "which source reported first?" names distinct sources
                    marks[d].add(("source", document.source))
            if len({m for d in docs for m in marks[d] if m[0] == "day"}) < hops:
                return None
        elif len(docs) < hops:
            return None
        if story and self.grouping == "story":
            return self._story(docs, rng, hops, marks)
        if dated:   # one document per day: the first by id
            days: dict[object, str] = {}
            for doc in docs:
                days.setdefault(self.pool.documents[doc].published_at.date(), doc)
            docs = {doc: docs[doc] for doc in sorted(days.values())}
        chosen = sorted(rng.choice(sorted(docs), size=hops, replace=False))
        return [docs[d][0] for d in chosen]

    @functools.cached_property
    def story_floor(self) -> float:
        """The cosine an article's chunk must reach with a story's chunks to join it: the `coherence`
        quantile of the cosines of random pairs of chunks from different articles of this corpus (a
        fixed sample, so the bar is the corpus's own, whatever its embedding model, subject or the seed)."""
        vectors, documents = self.pool.chunk_vectors, [self.pool.chunk_document[c] for c in self.pool.chunk_ids]
        if len(vectors) < 2:
            return -1.0
        rng = np.random.default_rng(list(b"story-floor"))
        a, b = rng.integers(len(vectors), size=(2, 20000))
        other = np.asarray([documents[i] != documents[j] for i, j in zip(a, b)])
        if not other.any():
            return -1.0
        cosines = np.einsum("ij,ij->i", vectors[a[other]], vectors[b[other]])
        return float(np.quantile(cosines, self.coherence))

    def _story(self, docs: dict[str, list[str]], rng: np.random.Generator, hops: int,
               marks: dict[str, set[tuple[str, object]]]) -> list[str] | None:
        """Up to STORY_STARTS first articles drawn at random; from each, one at a time, the article with
        the claim whose chunk reads closest (mean cosine of the chunks' embeddings) to the claims chosen
        so far, and no day or source (`marks`) of theirs: claims that share their bridge and a story,
        not just a name that hundreds of unrelated reports mention. The first start that reaches `hops`
        articles, each at least as close as the story floor, is the group; None when none does."""
        order = sorted(docs)
        claims = [(doc, claim) for doc in order for claim in docs[doc]]
        rows = [self.pool.chunk_row[self.pool.claims[c].chunk_id] for _, c in claims]
        vectors = self.pool.chunk_vectors[rows]
        first_row = {doc: i for i, (doc, _) in reversed(list(enumerate(claims)))}   # a document's first claim
        for start in rng.permutation(len(order))[:STORY_STARTS]:
            first = order[int(start)]
            chosen, taken, picked = {first: docs[first][0]}, set(marks.get(first, ())), [first_row[first]]
            while len(chosen) < hops:
                scores = (vectors @ vectors[picked].T).mean(axis=1)
                best = next((i for i in np.argsort(-scores, kind="stable") if claims[i][0] not in chosen
                             and not marks.get(claims[i][0], set()) & taken), None)
                if best is None or scores[best] < self.story_floor:
                    break
                doc, claim = claims[best]
                chosen[doc] = claim
                taken |= marks.get(doc, set())
                picked.append(best)
            if len(chosen) == hops:
                return [chosen[d] for d in sorted(chosen)]
        return None

    def _shuffled(self, keys: list[str], rng: np.random.Generator) -> list[str]:
        return [keys[i] for i in rng.permutation(len(keys))]

    # -- one iterator per type -----------------------------------------------------------------
    def candidates(self, question_type: str) -> Iterator[Candidate]:
        return {INFERENCE: self.inference, COMPARISON: self.comparison, TEMPORAL: self.temporal,
                NULL: self.null}[question_type]()

    def inference(self) -> Iterator[Candidate]:
        rng = self._rng(INFERENCE)
        for key in self._shuffled(self.targets, rng):
            claims = self._pick(key, rng, draw_hops(rng, *self.hops))
            if claims:
                first = self.pool.claims[claims[0]]
                yield Candidate(MULTIHOP_RAG, INFERENCE, tuple(claims), f"target:{key}", first.target,
                                extra={"kind": self.kinds(first.target, first.text)})

    def comparison(self) -> Iterator[Candidate]:
        rng = self._rng(COMPARISON)
        same, different = self._same_target(rng), self._different_targets(rng)
        while True:
            source = same if rng.random() < 0.5 else different
            candidate = next(source, None) or next(different if source is same else same, None)
            if candidate is None:
                return
            yield candidate

    def _same_target(self, rng: np.random.Generator) -> Iterator[Candidate]:
        for key in self._shuffled(self.targets, rng):
            claims = self._pick(key, rng, draw_hops(rng, *self.hops))
            if claims:
                kind = self.kinds(self.pool.claims[claims[0]].target, self.pool.claims[claims[0]].text)
                yield Candidate(MULTIHOP_RAG, COMPARISON, tuple(claims), f"target:{key}", "Yes", extra={"kind": kind})

    def _different_targets(self, rng: np.random.Generator) -> Iterator[Candidate]:
        for key in self._shuffled(self.topics, rng):
            hops = draw_hops(rng, *self.hops)
            by_kind: dict[str, dict[str, str]] = defaultdict(dict)   # kind -> target -> claim
            used_docs: dict[str, set[str]] = defaultdict(set)
            for doc, claims in self._per_document(self.pool.by_topic[key], rng).items():
                claim = self.pool.claims[claims[0]]
                if not claim.target_key or len(claim.target or "") < MIN_NAME_CHARS:
                    continue
                kind = self.kinds(claim.target, claim.text)
                if claim.target_key not in by_kind[kind] and doc not in used_docs[kind]:
                    by_kind[kind][claim.target_key] = claim.id
                    used_docs[kind].add(doc)
            for kind in sorted(by_kind):
                if len(by_kind[kind]) >= hops:
                    keys = sorted(rng.choice(sorted(by_kind[kind]), size=hops, replace=False))
                    yield Candidate(MULTIHOP_RAG, COMPARISON, tuple(by_kind[kind][k] for k in keys), f"topic:{key}",
                                    "No", extra={"kind": kind})
                    break

    def temporal(self) -> Iterator[Candidate]:
        if not self.pool.has_dates:
            return
        rng = self._rng(TEMPORAL)
        for key in self._shuffled(self.targets, rng):
            hops = draw_hops(rng, *self.hops)
            claims = self._pick(key, rng, hops, dated=True)
            if claims is None:
                continue
            claims = [claims[i] for i in rng.permutation(len(claims))]   # the order the question reads them
            dates = [self.pool.document_of(c).published_at for c in claims]
            if len(claims) == 2:
                yield Candidate(MULTIHOP_RAG, TEMPORAL, tuple(claims), f"target:{key}",
                                "Yes" if dates[0] < dates[1] else "No", extra={"form": "before"})
                continue
            sources = [self.pool.document_of(c).source for c in claims]
            if all(sources) and len(set(sources)) == len(sources):
                first = sources[int(np.argmin(dates))]
                yield Candidate(MULTIHOP_RAG, TEMPORAL, tuple(claims), f"target:{key}", first,
                                extra={"form": "first"})

    def null(self) -> Iterator[Candidate]:
        rng = self._rng(NULL)
        names: dict[str, list[str]] = defaultdict(list)
        for key in self.targets:
            claim = self.pool.claims[self.pool.by_target[key][0]]
            if len((claim.target or "").split()) >= 2:
                names[self.kinds(claim.target, claim.text)].append(claim.target)
        for key in self._shuffled(self.targets, rng):
            claim = self.pool.claims[self.pool.by_target[key][0]]
            target = claim.target or ""
            kind = self.kinds(target, claim.text)
            if kind not in FAKE_KINDS or len(names[kind]) < 2:
                continue
            claims = self._pick(key, rng, 2, story=False)
            fake = self.fake_name(names[kind], rng) if claims else None
            if fake:
                yield Candidate(MULTIHOP_RAG, NULL, tuple(claims), f"target:{key}", NULL_ANSWER, evidence=False,
                                extra={"kind": kind, "fake": fake, "replaces": target})

    def fake_name(self, names: list[str], rng: np.random.Generator, tries: int = 20) -> str | None:
        """A name spliced from two real names of one kind that no chunk and no target holds."""
        for _ in range(tries):
            a, b = rng.choice(len(names), size=2, replace=False)
            first, last = names[a].split()[0], names[b].split()[-1]
            fake = f"{first} {last}"
            if first.lower() not in {"the", "a", "an"} and first.lower() != last.lower() \
                    and not self.pool.mentions(fake):
                return fake
        return None
