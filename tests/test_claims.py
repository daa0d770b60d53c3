"""Claims: extraction on crafted chunks (pronouns, opinions, several entities) and name keys."""

from __future__ import annotations

import pytest

from mhgraph.claims.names import name_key

pytest.importorskip("spacy", reason="the claims extra (pip install -e '.[claims]') is not installed")

from mhgraph.claims.extract import OfflineClaimExtractor  # noqa: E402

RECALL = ("Veltrix Robotics said on Tuesday it would recall 62,000 Atlas Home robots over a battery fire risk. "
          "I think this is a terrible decision. Its shares slid 18 per cent on Wednesday, according to Global "
          "Finance Wire. The company blamed Corvane Cells, an Ohio-based supplier, for a defective batch. "
          "Chief executive Maya Okafor said she would seek compensation. What happens next? It was a wonderful day. "
          "We believe the recall was handled well by the board in 2023.")


@pytest.fixture(scope="module")
def extractor() -> OfflineClaimExtractor:
    return OfflineClaimExtractor()


def test_pronouns_and_vague_references_are_resolved(extractor) -> None:
    claims = extractor.extract(RECALL, "Veltrix recalls laundry robots")
    texts = [c.text for c in claims]
    assert texts[0] == ("Veltrix Robotics said on Tuesday Veltrix Robotics would recall 62,000 Atlas Home robots "
                        "over a battery fire risk.")
    assert texts[1].startswith("Veltrix Robotics' shares slid 18 per cent")
    assert texts[2].startswith("Veltrix Robotics blamed Corvane Cells")   # "The company"
    assert texts[3] == "Chief executive Maya Okafor said Maya Okafor would seek compensation."
    assert not any(" it " in t or t.startswith(("It ", "Its ")) or " she " in t for t in texts)


def test_opinions_and_questions_are_dropped(extractor) -> None:
    texts = [c.text for c in extractor.extract(RECALL)]
    assert len(texts) == 4
    assert not any("terrible" in t or "wonderful" in t or "believe" in t or t.endswith("?") for t in texts)
    # a quoted opinion is someone's reported words, not the writer's: kept when it is a fact about them
    quoted = extractor.extract('Maya Okafor told reporters on Monday: "I think Veltrix will recover by 2025."')
    assert [c.target for c in quoted] == ["Maya Okafor"]


def test_targets_and_topics_with_several_entities(extractor) -> None:
    claims = extractor.extract(RECALL, "Veltrix recalls laundry robots")
    assert [c.target for c in claims] == ["Veltrix Robotics", "Veltrix Robotics", "Veltrix Robotics", "Maya Okafor"]
    assert claims[1].topic == "share slide" and claims[2].topic == "corvane cells"
    assert claims[0].topic == "atlas home robots"   # of the clause reported, not "say"
    # a sentence whose pronoun has nothing to resolve to is no claim: it would not stand alone
    assert extractor.extract("She said the deal closed on Friday for $3 billion.") == []


def test_name_keys_merge_spellings() -> None:
    assert name_key("The Verge's") == name_key("the verge") == "verge"
    assert name_key("Veltrix Robotics, Inc.") == name_key("VELTRIX ROBOTICS") == "veltrix robotics"
    assert name_key("Sam Bankman-Fried") == "sam bankman fried"
    assert name_key("Co") == "co"   # a name that is only a suffix stays
