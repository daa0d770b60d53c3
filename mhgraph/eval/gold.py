"""Which chunks are gold evidence for a MultiHop-RAG evidence fact.

The rule (`GoldMatcher.match`, the one place it is decided):

1. A chunk is gold for a fact when its normalised text contains the normalised fact
   (`contains_fact`). Every chunk of the corpus that does is gold, whatever its article (a fact
   quoted verbatim by two outlets is found in both).
2. If no single chunk does, the fact is located in the normalised article bodies. The fact's
   article is the one whose title equals the evidence title (after normalisation) and whose body
   contains the fact; when no such article exists (no title, or a title not in the corpus), every
   article whose body contains the fact is used. In those articles, the chunks whose character
   span [start_char, end_char) overlaps the fact's span in the body are gold. This catches a fact
   that is split across two overlapping consecutive chunks and is whole in neither.
3. Otherwise the fact has no gold chunk; `coverage_report` lists such facts.

Normalisation (`normalise`): NFKC; curly single quotes and apostrophes to `'`, curly double
quotes to `"`, hyphen and dash characters (U+2010..U+2015, U+2212) to `-`; soft hyphens and
zero-width characters removed; every run of whitespace (NBSP included) to one space; stripped;
casefolded. NFKC is applied per character cluster (a base character with its combining marks), so
that each normalised character can be traced back to its place in the original text; for
anything but rare Hangul jamo sequences this equals NFKC of the whole string. The same function
normalises facts, chunks and bodies, so a chunk that is a slice of its body normalises to a
substring of the normalised body.

Chunk texts must be the exact slices `body[start_char:end_char]` of their article (as
`mhgraph.ingest.chunking.TokenChunker` makes them). When the bodies are not given they are rebuilt
from the chunks by their offsets (gaps between chunks, if any, become spaces).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Literal, Sequence, Union

from mhgraph.errors import MhgraphError

if TYPE_CHECKING:
    from mhgraph.ingest.corpus import Article
    from mhgraph.types import Question

_TRANSLATE = str.maketrans({
    **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
    **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
    **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
    **{c: None for c in "\u00ad\u200b\u200c\u200d\u2060\ufeff"},
})
FACT_PREVIEW = 80


# -- normalisation ----------------------------------------------------------------------------
def normalise_with_offsets(text: str) -> tuple[str, list[int], list[int]]:
    """`normalise(text)` and, for each of its characters, the [start, end) span it came from."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    space_at: tuple[int, int] | None = None   # span of the pending whitespace run
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        if text[i] < "\x80" and (j == n or text[j] < "\x80"):
            piece = text[i].lower()            # ASCII: NFKC and the translation leave it alone
        else:
            while j < n and unicodedata.combining(text[j]):
                j += 1
            piece = unicodedata.normalize("NFKC", text[i:j]).translate(_TRANSLATE).casefold()
        for ch in piece:
            if ch.isspace():
                space_at = (space_at[0] if space_at else i, j)
                continue
            if space_at is not None and out:
                out.append(" ")
                starts.append(space_at[0])
                ends.append(space_at[1])
            space_at = None
            out.append(ch)
            starts.append(i)
            ends.append(j)
        i = j
    return "".join(out), starts, ends


def normalise(text: str) -> str:
    """The normalised form used for every containment test (see the module docstring)."""
    if text.isascii():
        return " ".join(text.split()).lower()   # same result as the general path, faster
    return normalise_with_offsets(text)[0]


def contains_fact(chunk_text: str, fact: str) -> bool:
    """Whether the chunk contains the whole fact, after normalising both (rule 1)."""
    needle = normalise(fact)
    return bool(needle) and needle in normalise(chunk_text)


# -- inputs -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChunkRef:
    """A stored chunk: `text` is `body[start_char:end_char]` of the document it belongs to."""

    chunk_id: str
    document: str          # the document's id (or its title, when ids are not at hand)
    start_char: int
    end_char: int
    text: str
    index: int | None = None


@dataclass(frozen=True)
class DocumentRef:
    """An article as the matcher needs it: the key its chunks use, its title and its body."""

    document: str
    title: str
    body: str | None = None   # None: rebuilt from the chunks' spans


ChunkLike = Union[ChunkRef, Sequence]   # or a tuple (chunk_id, document, start_char, end_char, text)


def _chunk(value: ChunkLike) -> ChunkRef:
    if isinstance(value, ChunkRef):
        return value
    chunk_id, document, start, end, text, *rest = value
    return ChunkRef(str(chunk_id), str(document), int(start), int(end), str(text), rest[0] if rest else None)


@dataclass(frozen=True)
class FactMatch:
    """The gold chunks of one fact and which step of the rule found them."""

    chunk_ids: tuple[str, ...]
    rule: Literal["chunk", "span", "none"]


@dataclass
class _Document:
    key: str
    title: str
    body: str
    chunks: list[ChunkRef]
    normalised_title: str = ""
    normalised_body: str = ""
    normalised_chunks: list[str] = field(default_factory=list)
    _offsets: tuple[list[int], list[int]] | None = None

    def offsets(self) -> tuple[list[int], list[int]]:
        if self._offsets is None:
            text, starts, ends = normalise_with_offsets(self.body)
            assert text == self.normalised_body
            self._offsets = (starts, ends)
        return self._offsets


def _rebuild_body(chunks: Sequence[ChunkRef]) -> str:
    buffer = [" "] * max((c.end_char for c in chunks), default=0)
    for c in chunks:
        buffer[c.start_char:c.end_char] = c.text
    return "".join(buffer)


# -- the rule ---------------------------------------------------------------------------------
class GoldMatcher:
    """Maps evidence facts to gold chunk ids over one chunked corpus (rule in module docstring)."""

    def __init__(self, chunks: Iterable[ChunkLike], documents: Iterable[DocumentRef] = ()) -> None:
        by_document: dict[str, list[ChunkRef]] = {}
        for value in chunks:
            c = _chunk(value)
            if c.end_char - c.start_char != len(c.text) or c.start_char < 0:
                raise MhgraphError(f"chunk {c.chunk_id} of document {c.document}: span "
                                   f"[{c.start_char}, {c.end_char}) does not fit its {len(c.text)} characters")
            by_document.setdefault(c.document, []).append(c)
        given = {d.document: d for d in documents}
        self._documents: list[_Document] = []
        for key, doc_chunks in by_document.items():
            doc_chunks.sort(key=lambda c: (c.start_char, c.end_char))
            ref = given.get(key)
            body = ref.body if ref and ref.body is not None else _rebuild_body(doc_chunks)
            for c in doc_chunks:
                if body[c.start_char:c.end_char] != c.text:
                    raise MhgraphError(f"chunk {c.chunk_id} is not the slice [{c.start_char}, {c.end_char}) "
                                       f"of the body of document {key}; re-ingest the corpus")
            title = ref.title if ref else key
            self._documents.append(_Document(key, title, body, doc_chunks, normalise(title), normalise(body),
                                             [normalise(c.text) for c in doc_chunks]))
        self._cache: dict[tuple[str, str | None], FactMatch] = {}

    @classmethod
    def from_articles(cls, articles: Iterable[Article], chunks: Iterable[ChunkLike]) -> GoldMatcher:
        """Chunks keyed by `Article.id` (as ingest stores them), bodies and titles from the articles."""
        return cls(chunks, [DocumentRef(a.id, a.title, a.body) for a in articles])

    @property
    def chunk_count(self) -> int:
        return sum(len(d.chunks) for d in self._documents)

    def chunk_texts(self) -> list[str]:
        return [c.text for d in self._documents for c in d.chunks]

    def match(self, fact: str, title: str | None = None) -> list[str]:
        """Gold chunk ids of `fact` (evidence `title` picks its article in step 2)."""
        return list(self.match_detail(fact, title).chunk_ids)

    def match_detail(self, fact: str, title: str | None = None) -> FactMatch:
        needle = normalise(fact)
        key = (needle, normalise(title) if title else None)
        if key not in self._cache:
            self._cache[key] = self._match(*key)
        return self._cache[key]

    def _match(self, needle: str, title: str | None) -> FactMatch:
        if not needle:
            return FactMatch((), "none")
        containing = [d for d in self._documents if needle in d.normalised_body]
        whole = tuple(c.chunk_id for d in containing
                      for c, text in zip(d.chunks, d.normalised_chunks) if needle in text)
        if whole:
            return FactMatch(whole, "chunk")
        titled = [d for d in containing if d.normalised_title == title]
        spanned: dict[str, None] = {}
        for d in titled or containing:
            starts, ends = d.offsets()
            at = d.normalised_body.find(needle)
            while at >= 0:
                begin, end = starts[at], ends[at + len(needle) - 1]
                for c in d.chunks:
                    if c.start_char < end and c.end_char > begin:
                        spanned.setdefault(c.chunk_id, None)
                at = d.normalised_body.find(needle, at + 1)
        return FactMatch(tuple(spanned), "span") if spanned else FactMatch((), "none")

    def gold(self, question: Question) -> list[str]:
        """The question's gold set R(q): the union of its facts' gold chunks, first-seen order."""
        ids: dict[str, None] = {}
        for e in question.evidence:
            for chunk_id in self.match(e.fact, e.title):
                ids.setdefault(chunk_id, None)
        return list(ids)

    def gold_sets(self, questions: Iterable[Question]) -> dict[str, list[str]]:
        return {q.id: self.gold(q) for q in questions}


def gold_chunk_ids(
    fact: str,
    chunks: Iterable[ChunkLike],
    *,
    title: str | None = None,
    documents: Iterable[DocumentRef] = (),
) -> list[str]:
    """One-off form of `GoldMatcher(chunks, documents).match(fact, title)`; build a matcher for many facts."""
    return GoldMatcher(chunks, documents).match(fact, title)


# -- coverage ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class UnmatchedFact:
    question_id: str
    title: str | None
    fact: str               # the first FACT_PREVIEW characters


@dataclass
class CoverageReport:
    """How many evidence facts map to at least one chunk, and which do not."""

    facts: int = 0
    by_chunk: int = 0       # found whole in a chunk (rule 1)
    by_span: int = 0        # found only across chunk boundaries (rule 2)
    unmatched: list[UnmatchedFact] = field(default_factory=list)
    questions_without_gold: list[str] = field(default_factory=list)   # have evidence, no gold chunk

    @property
    def matched(self) -> int:
        return self.by_chunk + self.by_span

    @property
    def share(self) -> float:
        return self.matched / self.facts if self.facts else 1.0

    def lines(self) -> list[str]:
        out = [f"facts {self.facts}: matched {self.matched} ({self.share:.1%}; whole in a chunk {self.by_chunk}, "
               f"across chunks {self.by_span}), unmatched {len(self.unmatched)}",
               f"questions with evidence but no gold chunk: {len(self.questions_without_gold)}"]
        out += [f"  unmatched {u.question_id} [{u.title or '?'}] {u.fact!r}" for u in self.unmatched]
        return out


def coverage_report(questions: Iterable[Question], matcher: GoldMatcher) -> CoverageReport:
    report = CoverageReport()
    for q in questions:
        found = False
        for e in q.evidence:
            report.facts += 1
            result = matcher.match_detail(e.fact, e.title)
            if result.rule == "chunk":
                report.by_chunk += 1
            elif result.rule == "span":
                report.by_span += 1
            else:
                report.unmatched.append(UnmatchedFact(q.id, e.title, e.fact[:FACT_PREVIEW]))
            found = found or bool(result.chunk_ids)
        if q.evidence and not found:
            report.questions_without_gold.append(q.id)
    return report
