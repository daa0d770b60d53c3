"""Sentences and content words of English text (mhgraph/text.py): the stop words are English
function words alone, so a word one benchmark's questions use to frame themselves stays a word."""

from __future__ import annotations

from mhgraph.reasoning.text import content_words as reasoner_words
from mhgraph.text import FUNCTION_WORDS, content_words, sentences


def test_content_words_drop_function_words_and_keep_every_other_word() -> None:
    text = "According to the report, the source of Google's news article was reported in July by a Reuters piece."
    assert content_words(text) == ["report", "source", "google", "news", "article", "reported", "july", "reuters",
                                   "piece"]
    # the offline reasoner drops the words that frame a question about news, on top of these
    assert reasoner_words(text) == ["google", "july", "reuters"]
    assert {"reported", "article", "source", "news"}.isdisjoint(FUNCTION_WORDS)
    assert content_words("Who is it?") == [] and content_words("a B c", stop_words=frozenset()) == []


def test_sentences_end_at_stops_and_line_breaks_but_not_after_abbreviations() -> None:
    text = "Dr. Smith met U.S. officials on Monday. They paid $1.5 billion!\nA new line\n\nand \"Quoted.\" Next one"
    assert sentences(text) == ["Dr. Smith met U.S. officials on Monday.", "They paid $1.5 billion!", "A new line",
                               "and \"Quoted.\"", "Next one"]
    assert sentences("  \n ") == []
