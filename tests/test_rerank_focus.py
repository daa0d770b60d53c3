"""Focused passages (mhgraph/rerank/focus.py): the run of sentences a cut cross-encoder reads."""

from mhgraph.rerank.focus import focused


def words(texts):
    """A token counter for the tests: one token a word."""
    return [len(t.split()) for t in texts]


FILLER = "Shares closed higher on the day. Analysts expected a quiet quarter. The weather stayed mild."


def test_a_passage_that_fits_is_read_whole() -> None:
    passage = "Veltrix recalled its robots. The regulator opened a case."
    assert focused("Why did Veltrix recall robots?", [passage], room=20, count_tokens=words) == [passage]


def test_a_long_passage_is_read_from_the_sentences_that_hold_the_question() -> None:
    answer = "Veltrix recalled its warehouse robots after the regulator ruled."
    passage = f"{FILLER} {answer}"
    room = len(answer.split()) + 2
    [excerpt] = focused("Which regulator ruled on the Veltrix robots?", [passage], room, words)
    assert excerpt == answer
    # the start is kept when nothing in the passage is asked about: a plain cut's reading
    [unrelated] = focused("Who won the cup final?", [passage], room, words)
    assert unrelated.startswith("Shares closed higher") and len(unrelated.split()) <= room


def test_the_run_fills_the_room_with_the_sentences_after_the_best_one() -> None:
    passage = f"{FILLER} Veltrix recalled robots. The regulator fined it. Markets shrugged."
    [excerpt] = focused("Did the regulator fine Veltrix over its robots?", [passage], room=8, count_tokens=words)
    assert excerpt == "Veltrix recalled robots. The regulator fined it."


def test_a_word_every_sentence_holds_counts_less_than_a_rare_one() -> None:
    # "veltrix" is in every sentence of the passages scored, "lawsuit" in one: the lawsuit's sentence wins
    passages = ["Veltrix hired staff. Veltrix opened offices. Veltrix lost the lawsuit.",
                "Veltrix sells robots. Veltrix shares rose."]
    excerpts = focused("Did Veltrix lose the lawsuit?", passages, room=4, count_tokens=words)
    assert excerpts[0] == "Veltrix lost the lawsuit."
    assert excerpts[1] == "Veltrix sells robots."     # no sentence holds more: its start


def test_a_first_sentence_longer_than_the_room_is_the_run_alone() -> None:
    passage = "Veltrix recalled every warehouse robot it had sold in Europe last spring. Markets shrugged."
    [excerpt] = focused("Did Veltrix recall robots in Europe?", [passage], room=5, count_tokens=words)
    assert excerpt == "Veltrix recalled every warehouse robot it had sold in Europe last spring."
