"""Who writes a candidate's question: templates over the claim layer's fields (offline, labelled
"offline templates") or a language model through the LLM layer.

Both return a `Written` question whose evidence facts are sentences quoted verbatim from chunks:
- MultiHop-RAG construction: the facts are the group's claims' sentences (pool.fact); a model only
  words the question, given the facts, the type and the answer the data fixes.
- MHTS construction: with a model, the model composes the multi-hop claim from the claims, writes
  the question and answer from it, and decomposes it into pieces; each piece is mapped to a
  sentence of the claims' chunks, unmapped pieces are dropped, and hops = mapped pieces. The
  templates compose by joining the claims, so every piece maps.

Template wording: a claim's sentence with its target replaced by "this <kind>" (inference) or "a
<kind>" (comparison), cut to `GIST_WORDS` words, introduced by its source ("the Reuters article")
or, without sources, by ordinals ("a report", "another report"). Offline questions read stiffly;
their evidence is exact.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, Field

from mhgraph.claims.extract import load_pipeline, possessive
from mhgraph.generate.candidate import (
    COMPARISON,
    INFERENCE,
    MHTS,
    NULL,
    TEMPORAL,
    Candidate,
)
from mhgraph.generate.pool import ClaimPool
from mhgraph.llm.base import LLMOutputError

OFFLINE_LABEL = "offline templates"
PROMPT_VERSION = "generate-v2"
TEMPLATE_VERSION = "templates-v4"   # v4: a target's kind (which person, which place) by its claims' majority
GIST_WORDS = 16
LEADING = frozenset({"The", "A", "An", "This", "That", "These", "Those"})
WORD = re.compile(r"\w+")
NAME_FILLERS = frozenset({"the", "and", "for", "inc", "ltd", "llc", "corp"})
ORDINALS = ("a report", "another report", "a third report", "a fourth report")


def name_words(name: str) -> set[str]:
    """The words of a name that give it away (three letters or more, lower case, split at hyphens too)."""
    return {w for w in re.split(r"[\W_]+", name.lower()) if len(w) >= 3 and w not in NAME_FILLERS}


class Rejected(Exception):
    """The candidate makes no usable question; the reason is counted in the summary."""


@dataclass
class Written:
    query: str
    answer: str
    facts: list[tuple[str, str]]                 # (chunk id, verbatim fact), in evidence order
    composed: str | None = None                  # MHTS: the multi-hop claim the question asks for
    pieces: dict[str, int] = field(default_factory=dict)   # MHTS: pieces decomposed / mapped


class QuestionWriter(Protocol):
    label: str                 # "offline templates" or the model's label
    prompt_version: str

    def write(self, candidate: Candidate, pool: ClaimPool) -> Written: ...


# -- template helpers ---------------------------------------------------------------------------
def mask(text: str, name: str, replacement: str, *, surname: bool = False) -> str:
    """`text` with `name` and its possessive replaced (and, for a person, the surname alone)."""
    def swap(match: re.Match) -> str:
        return replacement + ("'s" if match.group(1) else "")

    # "the X", "X", "X's", "X'" (a possessive of a name ending in s); not inside a hyphenated word
    # ("USB" in "USB-C"), whose other half would be left dangling
    def pattern(words: str) -> str:
        return rf"(?<![\w-])(?:the\s+)?{re.escape(words)}(['\u2019]s?)?(?![\w-])"

    out = re.sub(pattern(name), swap, text, flags=re.IGNORECASE) if name.strip() else text
    last = name.split()[-1] if name.split() else ""
    if surname and len(name.split()) > 1 and len(last) >= 3:
        out = re.sub(pattern(last), swap, out)
    return out


class Compressor:
    """A claim cut to its main clause with spaCy's parse: relative clauses, appositions, adverbial
    and parenthetical clauses and coordinated phrases go, and prepositional phrases after
    the second; a claim reported by someone other than its target ("..., two people said") keeps
    the clause reported. Less of the fact's wording in the question, as in the real benchmark
    (whose questions share about a third of their words with their facts). When the cut loses
    the target, the whole claim is used."""

    DROP = frozenset({"relcl", "appos", "advcl", "parataxis", "acl", "npadvmod", "punct", "cc", "conj", "intj",
                      "meta", "dep"})
    REPORTING = frozenset({"say", "tell", "report", "announce", "add", "note", "state", "claim", "write"})

    def __init__(self, nlp=None) -> None:
        self._nlp = nlp
        self._seen: dict[tuple[str, str], str] = {}

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = load_pipeline()
        return self._nlp

    def __call__(self, text: str, target: str) -> str:
        key = (text, target)
        if key not in self._seen:
            self._seen[key] = self._compress(text, target)
        return self._seen[key]

    def _compress(self, text: str, target: str) -> str:
        doc = self.nlp(text)
        root = doc[:].root
        subject = " ".join(t.text for c in root.children if c.dep_ in {"nsubj", "nsubjpass"} for t in c.subtree)
        if root.lemma_.lower() in self.REPORTING and target.lower() not in subject.lower():
            root = next((c for c in root.children if c.dep_ == "ccomp"), root)
        keep = {t.i for t in root.subtree}
        preps = 0
        for t in root.subtree:
            if t.i not in keep or t == root:
                continue
            drop = t.dep_ in self.DROP
            if t.dep_ == "prep":
                preps += 1
                drop = preps > 2
            if drop:
                keep.difference_update(s.i for s in t.subtree)
        kept = sorted(keep)
        cut = "".join(doc[i].text + (" " if doc[i].whitespace_ or i + 1 not in keep else "") for i in kept).strip()
        if target and target.lower() in text.lower() and target.lower() not in cut.lower():
            return text
        return cut


def gist(text: str, words: int = GIST_WORDS) -> str:
    """The first `words` words of a claim, without its closing punctuation or quotation marks, a
    leading article in lower case (it follows "that")."""
    parts = text.split()
    if parts and parts[0] in LEADING:
        parts[0] = parts[0].lower()
    cut = " ".join(parts[:words]).strip().rstrip(".,;:!?\"'\u201d\u2019")
    return cut.replace('"', "").replace("\u201c", "").replace("\u201d", "")


def references(pool: ClaimPool, claims: tuple[str, ...]) -> list[str]:
    """How the question names each claim's article: by its source ("the Reuters article", "another
    Reuters article" when the source comes again), or without sources by order ("a report")."""
    out, seen = [], set()
    for position, claim in enumerate(claims):
        source = pool.document_of(claim).source
        if not source:
            out.append(ORDINALS[min(position, len(ORDINALS) - 1)])
            continue
        name = source[4:] if source.lower().startswith("the ") else source
        out.append(f"another {name} article" if name in seen else f"the {name} article")
        seen.add(name)
    return out


def clean_topic(topic: str | None) -> str | None:
    """A bridge-topic fit to print as "X's <topic>": a short phrase of words (offline topics can be
    a noun with its verb, "share slide", and a layer built before the v2 extractor holds fragments
    such as "movement be"), else None."""
    words = (topic or "").split()
    if not 1 <= len(words) <= 4 or not all(w.isalpha() for w in words) or words[-1] in _FRAGMENT_ENDS:
        return None
    return " ".join(words)


_FRAGMENT_ENDS = frozenset(["be", "have", "do", "say", "said", "get", "make", "go", "is", "are", "was", "were", "point"])


def indefinite(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else "; ".join(items[:-1]) + "; and " + items[-1]


class OfflineTemplates:
    label = OFFLINE_LABEL
    prompt_version = TEMPLATE_VERSION

    def __init__(self, nlp=None) -> None:
        self.compress = Compressor(nlp)

    def write(self, candidate: Candidate, pool: ClaimPool) -> Written:
        facts = _claim_facts(candidate, pool)
        query = self.query(candidate, pool)
        composed = "; and ".join(pool.claims[c].text.rstrip(".") for c in candidate.claims) + "." \
            if candidate.construction == MHTS else None
        pieces = {"decomposed": len(facts), "mapped": len(facts)} if composed else {}
        return Written(query, candidate.answer or "", facts, composed, pieces)

    def query(self, candidate: Candidate, pool: ClaimPool) -> str:
        kind = candidate.extra.get("kind", "entity")
        claims = [pool.claims[c] for c in candidate.claims]
        refs = references(pool, candidate.claims)
        person = kind == "person"
        t = candidate.question_type
        if t == INFERENCE:
            gists = [gist(mask(self.compress(c.text, c.target or ""), c.target or "", f"this {kind}", surname=person)) for c in claims]
            said = [f"{r} that {g}" for r, g in zip(refs, gists)]
            if len(said) == 2:
                return f"Which {kind} is the subject of both {said[0]} and {said[1]}?"
            return f"Which {kind} is the subject of all of these: {listing(said)}?"
        if t == COMPARISON:
            gists = [gist(mask(self.compress(c.text, c.target or ""), c.target or "", indefinite(kind), surname=person))
                     for c in claims]
            said = [f"{r} reporting that {g}" for r, g in zip(refs, gists)]
            if len(said) == 2:
                return f"Do {said[0]} and {said[1]} concern the same {kind}?"
            return f"Do all of these concern the same {kind}: {listing(said)}?"
        if t == TEMPORAL:
            gists = [gist(self.compress(c.text, c.target or "")) for c in claims]
            if candidate.extra.get("form") == "first":
                sources = [pool.document_of(c.id).source for c in claims]
                said = [f"{s}, that {g}" for s, g in zip(sources, gists)]
                return f"Which source reported first: {listing(said).replace('; and ', '; or ')}?"
            return f"Was {refs[0]} reporting that {gists[0]} published before {refs[1]} reporting that {gists[1]}?"
        if t == NULL:
            fake = candidate.extra["fake"]
            topics = [clean_topic(c.topic) for c in claims]
            if topics[0] and topics[1] and topics[0] != topics[1]:
                return (f"What did {refs[0]} report about {possessive(fake)} {topics[0]}, and what did {refs[1]} say about "
                        f"{possessive(fake)} {topics[1]}?")
            if topics[0] or topics[1]:
                return f"What did {refs[0]} and {refs[1]} report about {possessive(fake)} {topics[0] or topics[1]}?"
            return f"What did {refs[0]} and {refs[1]} report about {fake}, and on what do they agree?"
        raise Rejected(f"no template for {t}")


class DescribedTemplates(OfflineTemplates):
    """Offline templates that describe each article instead of quoting its fact: the article by its
    source and headline ("the Reuters article ‘Fed holds rates’"), the fact by the rarest names
    and figures it holds ("which mentions the ECB and 5.25 percent"). Real benchmark questions
    paraphrase their facts (about a third of their words are in them); templates cannot paraphrase,
    so they carry less of the fact's wording instead of copying it. No clue shares a word with a
    target of the question's claims, and where the target is what the question asks (inference,
    comparison) headlines mask it; a headline that still holds a word of it (a short form, a
    surname) is left out. The reader has to find the bridge, and a method that looks names up in
    the claim layer is not handed the key the question was built from."""

    label = OFFLINE_LABEL
    prompt_version = "templates-described-v2"   # v2: kinds as TEMPLATE_VERSION v4 reads them
    HEADLINE_WORDS = 10
    CLUES = 3
    SKIP = frozenset({"DATE", "TIME", "ORDINAL"})
    SEPARATORS = (" | ", " - ", " \u2013 ", " \u2014 ", ": ", "? ")

    def __init__(self, nlp=None) -> None:
        super().__init__(nlp)
        self._clues: dict[tuple[str, tuple[str, ...]], list[str]] = {}

    def headline(self, title: str | None, source: str | None, hidden: tuple[str, ...] = (),
                 replacement: str = "") -> str | None:
        """The title's first part (before a separator such as " | "), cut after a noun phrase near
        HEADLINE_WORDS words. The `hidden` names are masked as `replacement`; a headline that still
        holds a word of one (a short form, a surname, half of a hyphenated word) is not shown."""
        text = " ".join(html.unescape(title or "").split())
        for sep in self.SEPARATORS:    # the first separator present that leaves a headline of 3 words or more
            head = text.split(sep)[0].strip()
            if sep in text and len(head.split()) >= 3:
                text = head
                break
        if len(text.split()) > self.HEADLINE_WORDS:
            doc = self.compress.nlp(text)
            last = doc[self._token_of_word(doc, self.HEADLINE_WORDS) - 1]
            ends = [c.end_char for c in doc.noun_chunks if c.end_char <= last.idx + len(last.text)]
            cut = max((e for e in ends if len(text[:e].split()) >= 3), default=None)
            text = text[:cut] if cut else " ".join(text.split()[:self.HEADLINE_WORDS])
        text = text.strip(" .,;:!?|\u2013\u2014-")
        if not any(ch.isalpha() for ch in text) or text.lower() == (source or "").strip().lower():
            return None
        for name in hidden:
            text = mask(text, name, replacement)
        left = text.replace(replacement, " ") if replacement else text
        if any(name_words(name) & set(WORD.findall(left.lower())) for name in hidden):
            return None
        return text

    @staticmethod
    def _token_of_word(doc, words: int) -> int:
        """The index after the token that ends the text's `words`-th whitespace word."""
        seen = 0
        for t in doc:
            if t.whitespace_:
                seen += 1
                if seen == words:
                    return t.i + 1
        return len(doc)

    def clues(self, pool: ClaimPool, fact: str, hidden: tuple[str, ...]) -> list[str]:
        """Up to CLUES names and figures of the fact (its nouns when it has none), the rarest kept, in
        the fact's order; none that shares a word with a `hidden` name."""
        key = (fact, hidden)
        if key not in self._clues:
            doc = self.compress.nlp(fact)
            lows = [h.lower() for h in hidden if h]
            hidden_words = set().union(*(name_words(h) for h in hidden)) if hidden else set()

            def shown(text: str) -> bool:
                low = text.lower()
                return not (name_words(text) & hidden_words or any(h in low or low in h for h in lows))

            names: list[str] = []
            for ent in doc.ents:
                name = ent.text.strip(" .,;:'\"\u2019\u201d\u201c")
                if (ent.label_ in self.SKIP or not any(ch.isalnum() for ch in name)
                        or (ent.label_ == "CARDINAL" and not any(ch.isdigit() for ch in name)) or not shown(name)):
                    continue
                if name.lower() not in {n.lower() for n in names}:
                    names.append(name)
            if not names:   # no names: the fact's nouns
                names = list(dict.fromkeys(c.root.text for c in doc.noun_chunks
                                           if c.root.pos_ == "NOUN" and not c.root.is_stop and shown(c.root.text)))
            # the rarest clues: the highest inverse document frequency of a clue's words
            rare = sorted(names, key=lambda n: max((pool.word_idf.get(w, 0.0) for w in WORD.findall(n.lower())),
                                                   default=0.0), reverse=True)[:self.CLUES]
            self._clues[key] = [n for n in names if n in rare]
        return self._clues[key]

    def describe(self, pool: ClaimPool, claim, ref: str, hidden: tuple[str, ...], *, mask_headline: bool,
                 replacement: str = "") -> str:
        """An article as the question names it: its reference, its headline (the `hidden` names masked as
        `replacement` when `mask_headline`) and its fact's clues (never a hidden name)."""
        doc = pool.document_of(claim.id)
        head = self.headline(doc.title, doc.source, hidden if mask_headline else (), replacement)
        text = f"{ref} \u2018{head}\u2019" if head else ref
        fact = pool.fact(claim.id) or claim.text
        clues = self.clues(pool, fact, hidden)
        return f"{text}, which mentions {_and(clues)}" if clues else text

    def query(self, candidate: Candidate, pool: ClaimPool) -> str:
        t = candidate.question_type
        if t == NULL:
            return super().query(candidate, pool)
        kind = candidate.extra.get("kind", "entity")
        claims = [pool.claims[c] for c in candidate.claims]
        refs = references(pool, candidate.claims)
        # every target of the candidate (and the answer) is hidden: the bridge is what is asked, or
        # (temporal) what a method that looks names up in the claim layer would be handed
        hidden = tuple(sorted({n for n in [*(c.target for c in claims), candidate.answer]
                               if n and n not in ("Yes", "No") and len(n) >= 3}))
        if t == INFERENCE:
            said = [self.describe(pool, c, r, hidden, mask_headline=True, replacement=f"this {kind}")
                    for c, r in zip(claims, refs)]
            if len(said) == 2:
                return f"Which {kind} is the subject of both {said[0]}; and {said[1]}?"
            return f"Which {kind} is the subject of all of these: {listing(said)}?"
        if t == COMPARISON:
            said = [self.describe(pool, c, r, hidden, mask_headline=True, replacement=indefinite(kind))
                    for c, r in zip(claims, refs)]
            if len(said) == 2:
                return f"Do {said[0]}; and {said[1]}; concern the same {kind}?"
            return f"Do all of these concern the same {kind}: {listing(said)}?"
        if t == TEMPORAL:
            if candidate.extra.get("form") == "first":
                sources = [pool.document_of(c.id).source or "" for c in claims]
                said = [self.describe(pool, c, s, hidden, mask_headline=False) for c, s in zip(claims, sources)]
                return f"Which source reported first: {listing(said).replace('; and ', '; or ')}?"
            said = [self.describe(pool, c, r, hidden, mask_headline=False) for c, r in zip(claims, refs)]
            return f"Was {said[0]}, published before {said[1]}?"
        raise Rejected(f"no template for {t}")


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _claim_facts(candidate: Candidate, pool: ClaimPool) -> list[tuple[str, str]]:
    if not candidate.evidence:
        return []
    facts = []
    for c in candidate.claims:
        fact = pool.fact(c)
        if fact is None:
            raise Rejected("a claim has no verbatim sentence in its chunk")
        facts.append((pool.claims[c].chunk_id, fact))
    return facts


# -- the model's path ---------------------------------------------------------------------------
class QuestionReply(BaseModel):
    question: str


class ComposedReply(BaseModel):
    claim: str


class QuestionAnswerReply(BaseModel):
    question: str
    answer: str


class PiecesReply(BaseModel):
    pieces: list[str] = Field(default_factory=list)


class AnswerReply(BaseModel):
    answer: str


def task(candidate: Candidate, pool: ClaimPool) -> str:
    """What the model is asked to write for this candidate: the question's form and its answer,
    which the data has fixed."""
    n, answer, kind = len(candidate.claims), candidate.answer, candidate.extra.get("kind", "entity")
    t = candidate.question_type
    if t == INFERENCE:
        return (f"Write a question whose answer is {answer}. It must combine what all {n} facts say, so that no "
                f"single fact answers it, and it must not name {answer}.")
    if t == COMPARISON:
        return (f"Write a yes/no question asking whether the {n} reports below concern the same {kind}, describing "
                f"each report by what it says (without naming the {kind}). The answer is {answer}.")
    if t == TEMPORAL and candidate.extra.get("form") == "first":
        sources = ", ".join(pool.document_of(c).source or "" for c in candidate.claims)
        return (f"Write a question asking which of these sources reported first: {sources}, describing each report "
                f"by what it says. The answer is {answer}.")
    if t == TEMPORAL:
        return ("Write a yes/no question asking whether the report of fact 1 was published before the report of "
                f"fact 2, describing each by what it says. The answer is {answer}.")
    fake = candidate.extra.get("fake")
    return (f"Write a question in the style of the facts about {fake}, an entity that does not exist; the question "
            f"must name {fake}. Its answer is 'Insufficient information.'")


WRITE_SYSTEM = ("You write one question for a multi-hop retrieval benchmark. The question must need every fact "
                "given, mention the sources (outlets) where they are given, be one sentence, and not copy the facts' "
                'wording at length. Reply with JSON only: {"question": "..."}.')
COMPOSE_SYSTEM = ("Combine the claims below into ONE multi-hop claim: one or two sentences that join what the "
                  "claims say through the entity they share. Use only what the claims say. "
                  'Reply with JSON only: {"claim": "..."}.')
QUESTION_SYSTEM = ("Write the question whose answer is the entity the multi-hop claim below is about: the question "
                   "must need every part of the claim and must not name the answer. Give the answer as a short "
                   'name. Reply with JSON only: {"question": "...", "answer": "..."}.')
DECOMPOSE_SYSTEM = ("Split the claim below into its atomic facts: each one short, self-contained sentence "
                    '(no pronouns). Reply with JSON only: {"pieces": ["...", "..."]}.')
ANSWER_SYSTEM = ("Answer the question from the evidence alone, with a short answer (an entity, Yes or No). If the "
                 "evidence does not answer it, answer 'Insufficient information.'. "
                 'Reply with JSON only: {"answer": "..."}.')


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# Each model step's messages, built in one place so that batch runs elsewhere (bench/llm_replay.py
# prepares a GPU's jobs with them) ask exactly what ModelWriter asks.
def write_messages(task_text: str, evidence_lines: str) -> list[dict[str, str]]:
    return _messages(WRITE_SYSTEM, f"{task_text}\nFacts:\n{evidence_lines}")


def compose_messages(numbered_claims: str) -> list[dict[str, str]]:
    return _messages(COMPOSE_SYSTEM, f"Claims:\n{numbered_claims}")


def question_messages(composed: str) -> list[dict[str, str]]:
    return _messages(QUESTION_SYSTEM, f"Multi-hop claim: {composed}")


def decompose_messages(composed: str) -> list[dict[str, str]]:
    return _messages(DECOMPOSE_SYSTEM, f"Claim: {composed}")


def answer_messages(query: str, facts: list[str]) -> list[dict[str, str]]:
    evidence = "\n".join(f"{i}. {f}" for i, f in enumerate(facts, start=1)) or "(none)"
    return _messages(ANSWER_SYSTEM, f"Question: {query}\nEvidence:\n{evidence}")


def _evidence_lines(pool: ClaimPool, candidate: Candidate, facts: list[str]) -> str:
    lines = []
    for i, (c, fact) in enumerate(zip(candidate.claims, facts), start=1):
        doc = pool.document_of(c)
        meta = ", ".join(x for x in (doc.source, doc.published_at.date().isoformat() if doc.published_at else None)
                         if x)
        lines.append(f"{i}. ({meta}) {fact}" if meta else f"{i}. {fact}")
    return "\n".join(lines)


class ModelWriter:
    prompt_version = PROMPT_VERSION

    def __init__(self, llm) -> None:
        self.llm = llm
        self.label = llm.label

    def write(self, candidate: Candidate, pool: ClaimPool) -> Written:
        if candidate.construction == MHTS:
            return self._tree(candidate, pool)
        facts = _claim_facts(candidate, pool)
        shown = [f for _, f in facts] or [pool.claims[c].text for c in candidate.claims]
        query = " ".join(self.llm.json(write_messages(task(candidate, pool), _evidence_lines(pool, candidate, shown)),
                                       QuestionReply).question.split())
        if not query:
            raise Rejected("the model wrote an empty question")
        return Written(query, candidate.answer or "", facts)

    def _tree(self, candidate: Candidate, pool: ClaimPool) -> Written:
        claims = "\n".join(f"{i}. {pool.claims[c].text}" for i, c in enumerate(candidate.claims, start=1))
        composed = " ".join(self.llm.json(compose_messages(claims), ComposedReply).claim.split())
        qa = self.llm.json(question_messages(composed), QuestionAnswerReply)
        pieces = [p for p in self.llm.json(decompose_messages(composed), PiecesReply).pieces if p.strip()]
        chunks = list(dict.fromkeys(pool.claims[c].chunk_id for c in candidate.claims))
        facts: list[tuple[str, str]] = []
        for piece in pieces:
            mapped = pool.map_piece(piece, chunks)
            if mapped is not None and mapped not in facts:
                facts.append(mapped)
        if len(facts) < 2:
            raise Rejected("fewer than two decomposed pieces map to a chunk")
        return Written(" ".join(qa.question.split()), " ".join(qa.answer.split()), facts, composed,
                       {"decomposed": len(pieces), "mapped": len(facts)})

    def answer_from_evidence(self, query: str, facts: list[str]) -> str:
        """The model's answer to `query` from the facts alone (the answerability check)."""
        try:
            return self.llm.json(answer_messages(query, facts), AnswerReply).answer
        except LLMOutputError:
            return ""


def make_writer(llm: Any, wording: str = "quote") -> QuestionWriter:
    if llm is not None:
        return ModelWriter(llm)
    return DescribedTemplates() if wording == "describe" else OfflineTemplates()



