"""Sentences and content words of English text, for any corpus: what the sentence reranker reads,
and what the offline reasoner builds its own word lists on. The stop words here are English
function words alone; none names how one benchmark's questions are worded."""

from __future__ import annotations

import re

# A sentence ends at . ! or ? followed by white space and a capital, digit or quote, or at a line
# break; "Dr. Smith", "U.S. officials" and "$1.5 billion" do not end one.
_ABBREVIATIONS = frozenset("mr mrs ms dr st jr sr vs inc ltd co corp no u.s u.k e.g i.e etc jan feb mar apr jun jul "
                           "aug sep sept oct nov dec gov sen rep gen".split())
_BOUNDARY = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)]))\s+(?=[\"'\u201c\u2018(]*[A-Z0-9])|\n+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019&-]*")
_POSSESSIVE = re.compile(r"['\u2019]s$|['\u2019]$")

# articles, pronouns, auxiliaries, prepositions, conjunctions and a few adverbs
FUNCTION_WORDS = frozenset("""
a about above according after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own regarding concerning same she should so some such
than that the their theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours yourself yourselves whether
""".split())


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (stripped, empty ones dropped)."""
    out: list[str] = []
    for piece in _BOUNDARY.split(text):
        piece = piece.strip()
        if not piece:
            continue
        # glue back a cut after an abbreviation ("Dr." + "Smith said ...")
        last = out[-1].rsplit(None, 1)[-1].rstrip(".").lower() if out else ""
        if out and out[-1].endswith(".") and last in _ABBREVIATIONS:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def content_words(text: str, stop_words: frozenset[str] = FUNCTION_WORDS) -> list[str]:
    """Lower-cased words of `text` that carry content (`stop_words` and one-letter words dropped),
    possessives folded ("Google's" -> "google"), in order, repeats kept."""
    words = []
    for w in _WORD.findall(text):
        w = _POSSESSIVE.sub("", w.lower())
        if len(w) > 1 and w not in stop_words:
            words.append(w)
    return words
