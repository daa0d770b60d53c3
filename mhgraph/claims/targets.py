"""Bridge targets for claim-bridge retrieval: which entities a question is about (2 to 4), and
which further entities the claims found point to (1 to 2 per claim).

- `OfflineTargetFinder`: no language model, labelled as such. A question's targets are its named
  entities (spaCy) that are not outlets (the corpus's Source names: an outlet is a filter, not
  what a question is about), then its longest noun phrases, up to 4. A claim's further targets
  are its own Target and the first other named entity in its text.
- `LLMTargetFinder`: the model names the question's targets, and the further targets of all
  claims of a hop in one call, as JSON through the LLM layer.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from pydantic import BaseModel, Field

from mhgraph.claims.extract import NAMING, load_pipeline
from mhgraph.claims.names import name_key
from mhgraph.filters.sources import SourceCatalog

OFFLINE_LABEL = "offline target finder (spaCy, no language model)"
WH_WORDS = frozenset("who whom whose what which when where why how".split())


class TargetFinder(Protocol):
    label: str

    def question_targets(self, question: str, most: int = 4) -> list[str]: ...

    def further_targets(self, question: str, claims: Sequence[tuple[str, str]], each: int = 2) -> list[list[str]]:
        """Per (claim text, claim's own target), up to `each` further targets."""
        ...


class OfflineTargetFinder:
    label = OFFLINE_LABEL

    def __init__(self, catalog: SourceCatalog | None = None, nlp=None) -> None:
        self.catalog = catalog
        self.nlp = nlp or load_pipeline()

    def _outlet(self, text: str) -> bool:
        return bool(self.catalog and self.catalog.find(text, capitalised=False))

    def question_targets(self, question: str, most: int = 4) -> list[str]:
        doc = self.nlp(question)
        found: dict[str, str] = {}
        for e in doc.ents:
            if e.label_ in NAMING and not self._outlet(e.text):
                found.setdefault(name_key(e.text), e.text)
        phrases = sorted((nc for nc in doc.noun_chunks
                          if nc.root.lower_ not in WH_WORDS and nc.root.pos_ != "PRON" and not self._outlet(nc.text)),
                         key=lambda nc: -len(nc))
        for nc in phrases:
            words = [t for t in nc if not t.is_stop and not t.is_punct]
            if len(words) >= 2 and not any(name_key(nc.text) in k or k in name_key(nc.text) for k in found):
                found.setdefault(name_key(nc.text), " ".join(t.text for t in words))
        return list(found.values())[:most]

    def further_targets(self, question: str, claims: Sequence[tuple[str, str]], each: int = 2) -> list[list[str]]:
        out = []
        for text, own in claims:
            names = [own]
            for e in self.nlp(text).ents:
                if e.label_ in NAMING and name_key(e.text) != name_key(own) and not self._outlet(e.text):
                    names.append(e.text)
                    break
            out.append(names[:each])
        return out


class _Targets(BaseModel):
    targets: list[str] = Field(default_factory=list)


class _Further(BaseModel):
    further: list[list[str]] = Field(default_factory=list)


class LLMTargetFinder:
    def __init__(self, llm) -> None:
        self.llm = llm
        self.label = llm.label

    def question_targets(self, question: str, most: int = 4) -> list[str]:
        reply = self.llm.json([
            {"role": "system", "content": "Name the 2 to 4 entities (people, companies, products, events, places) a "
                                          "question about news articles is about; not the news outlets. Reply with "
                                          'JSON only: {"targets": ["..."]}.'},
            {"role": "user", "content": question}], _Targets)
        return [t.strip() for t in reply.targets if t.strip()][:most]

    def further_targets(self, question: str, claims: Sequence[tuple[str, str]], each: int = 2) -> list[list[str]]:
        listed = "\n".join(f"{i}. {text}" for i, (text, _) in enumerate(claims, start=1))
        reply = self.llm.json([
            {"role": "system", "content": f"For each numbered claim, name 1 to {each} further entities to look up to "
                                          "answer the question. Reply with JSON only: "
                                          '{"further": [["...", "..."], ...]}, one list per claim, in order.'},
            {"role": "user", "content": f"Question: {question}\nClaims:\n{listed}"}], _Further)
        lists = [[t.strip() for t in names if t.strip()][:each] for names in reply.further]
        return (lists + [[] for _ in claims])[:len(claims)]
