"""What IR-CoT keeps of a model's reply, and the overlap the offline strategies measure: content
words under the offline reasoner's stop words, which add to English function words those that
frame a question about news (its source, its article, what it reported)."""

from __future__ import annotations

import re

from mhgraph.text import FUNCTION_WORDS, sentences
from mhgraph.text import content_words as _content_words

_ANSWER_IS = re.compile(r"\banswer\s+is\b", re.IGNORECASE)
STOPWORDS = FUNCTION_WORDS | frozenset("""
article articles published report reported reports mentioned suggest suggests suggested indicate indicates
considering piece source news based one
""".split())


def first_sentence(text: str) -> str:
    """The first sentence of a model's reply: IR-CoT keeps only that much of each step."""
    found = sentences(text.strip())
    return found[0] if found else ""


def says_answer(sentence: str) -> bool:
    """IR-CoT's stop rule: the thought gives the answer ("... the answer is ...")."""
    return bool(_ANSWER_IS.search(sentence))


def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` that carry content (the reasoner's stop words and one-letter
    words dropped), possessives folded ("Google's" -> "google"), in order, repeats kept."""
    return _content_words(text, STOPWORDS)


def overlap(terms: set[str], text: str) -> float:
    """The share of `terms` that `text` contains (0 when there are no terms)."""
    if not terms:
        return 0.0
    return len(terms & set(content_words(text))) / len(terms)
