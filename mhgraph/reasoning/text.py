"""Sentences and content words: what IR-CoT keeps of a model's reply, and the overlap the offline
strategies measure."""

from __future__ import annotations

import re

# A sentence ends at . ! or ? followed by white space and a capital, digit or quote, or at a line
# break; "Dr. Smith", "U.S. officials" and "$1.5 billion" do not end one.
_ABBREVIATIONS = frozenset("mr mrs ms dr st jr sr vs inc ltd co corp no u.s u.k e.g i.e etc jan feb mar apr jun jul "
                           "aug sep sept oct nov dec gov sen rep gen".split())
_BOUNDARY = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)]))\s+(?=[\"'\u201c\u2018(]*[A-Z0-9])|\n+")
_ANSWER_IS = re.compile(r"\banswer\s+is\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u2019&-]*")
STOPWORDS = frozenset("""
a about above according after again against all also am an and any are article articles as at be because been
before being below between both but by can could did do does doing down during each either few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own published report reported
reports same she should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with would you your
yours yourself yourselves whether did does mentioned according suggest suggests suggested indicate indicates
considering piece source news regarding concerning based both one
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


def first_sentence(text: str) -> str:
    """The first sentence of a model's reply: IR-CoT keeps only that much of each step."""
    found = sentences(text.strip())
    return found[0] if found else ""


def says_answer(sentence: str) -> bool:
    """IR-CoT's stop rule: the thought gives the answer ("... the answer is ...")."""
    return bool(_ANSWER_IS.search(sentence))


def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` that carry content (stop words and one-letter words dropped),
    possessives folded ("Google's" -> "google"), in order, repeats kept."""
    words = []
    for w in _WORD.findall(text):
        w = re.sub(r"['\u2019]s$|['\u2019]$", "", w.lower())
        if len(w) > 1 and w not in STOPWORDS:
            words.append(w)
    return words


def overlap(terms: set[str], text: str) -> float:
    """The share of `terms` that `text` contains (0 when there are no terms)."""
    if not terms:
        return 0.0
    return len(terms & set(content_words(text))) / len(terms)
