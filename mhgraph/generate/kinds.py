"""What kind of thing a bridge-target names (a person, an organisation, a place, ...), by spaCy's
named-entity recogniser: templates ask "which person" or "which organisation", comparisons pair
targets of one kind, and null questions invent names of that kind.

One sentence is a weak witness (the small model reads a footballer's surname as a place in one
sentence and as a person in the next), so with the corpus's claims at hand the kind is the one
most of the claims naming the target give it (up to MAX_VOTES of them), and plain "entity" where
no kind holds a majority: a question that asks "which entity" is vaguer, not wrong. A name that
ends in a legal form or a word such as "Labs" or "Bank" is an organisation, unless its claims
read it as a place ("West Bank")."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from mhgraph.claims.extract import load_pipeline

KINDS = {"PERSON": "person", "ORG": "organisation", "GPE": "place", "LOC": "place", "FAC": "place",
         "PRODUCT": "product", "EVENT": "event", "WORK_OF_ART": "work", "LAW": "law", "NORP": "group"}
DEFAULT_KIND = "entity"
MAX_VOTES = 9    # sentences read per target name (its claims in id order): enough for a majority
# a name that ends in one of these words names an organisation whatever one sentence's reading says
# (the small model reads "Solenne Labs" as a person): legal forms and the commonest kinds of body
_ORGANISATION_WORD = re.compile(
    r"(?<=\w )(?:inc|incorporated|corp|corporation|co|ltd|limited|llc|plc|gmbh|ag|sa|labs?|group|holdings|bank|"
    r"technologies|systems|pharmaceuticals|therapeutics|motors|airlines|robotics|university|institute|"
    r"foundation|association|agency|ministry|department|council|committee|commission|party|capital|partners|"
    r"ventures|studios|entertainment)\.?$", re.IGNORECASE)


class EntityKinds:
    def __init__(self, nlp=None, sentences: Mapping[str, Sequence[str]] | None = None) -> None:
        """`sentences`: target name -> the texts of the claims about it (in a fixed order); without
        them a name's kind is read in the one sentence a caller gives."""
        self._nlp = nlp
        self._sentences = sentences or {}
        self._seen: dict[tuple[str, str | None], str] = {}

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = load_pipeline()
        return self._nlp

    def __call__(self, name: str, context: str | None = None) -> str:
        """The kind of `name`: the majority of its claims' readings when they are known, else its
        reading in `context` (a sentence naming it: the name alone is often misread), else in the
        name alone. Kept per name (and context), so that a candidate's kind does not depend on which
        candidates were looked at before it (a run asking fewer questions of one type would
        otherwise word the next type's questions differently)."""
        claims = list(self._sentences.get(name, ()))[:MAX_VOTES]
        key = (name, None if claims else context)
        if key not in self._seen:
            texts = claims or ([context] if context else [])
            votes = Counter(label for text in texts if (label := _label(name, self.nlp(text))))
            if not votes and (label := _label(name, self.nlp(name))):
                votes[label] += 1
            top, count = votes.most_common(1)[0] if votes else (None, 0)
            kind = KINDS.get(top or "", DEFAULT_KIND) if count * 2 > sum(votes.values()) else DEFAULT_KIND
            if _ORGANISATION_WORD.search(name) and kind != "place":   # "Solenne Labs"; not "West Bank"
                kind = "organisation"
            self._seen[key] = kind
        return self._seen[key]


def _label(name: str, doc) -> str | None:
    """The label spaCy gives `name` in `doc` where it names it whole (None where it does not)."""
    return next((e.label_ for e in doc.ents if e.text.strip() == name.strip()), None)


def claim_sentences(claims: Mapping[str, object]) -> dict[str, list[str]]:
    """Target name -> the texts of its claims, in claim id order (a ClaimPool's `claims`)."""
    out: dict[str, list[str]] = {}
    for claim_id in sorted(claims):
        claim = claims[claim_id]
        if claim.target:
            out.setdefault(claim.target, []).append(claim.text)
    return out
