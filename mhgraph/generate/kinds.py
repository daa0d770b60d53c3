"""What kind of thing a bridge-target names (a person, an organisation, a place, ...), by spaCy's
named-entity recogniser run on a sentence that names it (else on the name alone): templates ask "which person" or "which organisation",
comparisons pair targets of one kind, and null questions invent names of that kind."""

from __future__ import annotations

from mhgraph.claims.extract import load_pipeline

KINDS = {"PERSON": "person", "ORG": "organisation", "GPE": "place", "LOC": "place", "FAC": "place",
         "PRODUCT": "product", "EVENT": "event", "WORK_OF_ART": "work", "LAW": "law", "NORP": "group"}
DEFAULT_KIND = "entity"


class EntityKinds:
    def __init__(self, nlp=None) -> None:
        self._nlp = nlp
        self._seen: dict[tuple[str, str | None], str] = {}

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = load_pipeline()
        return self._nlp

    def __call__(self, name: str, context: str | None = None) -> str:
        """The kind of `name`, read where it is used (`context`, a sentence naming it: the name alone
        is often misread) when given. Kept per name and context, so that a candidate's kind depends
        on its own claim only, not on which candidates were looked at before it (a run asking
        fewer questions of one type would otherwise word the next type's questions differently)."""
        key = (name, context)
        if key not in self._seen:
            label = None
            for text in ([context] if context else []) + [name]:
                ents = [e for e in self.nlp(text).ents if e.text.strip() == name.strip()]
                if ents:
                    label = ents[0].label_
                    break
            self._seen[key] = KINDS.get(label or "", DEFAULT_KIND)
        return self._seen[key]
