"""Publication-date conditions read from a question's text.

Date expressions are found by pattern ("October 7, 2023", "Oct. 7th", "7 October 2023",
"2023-10-07", "October 2023") and parsed with dateutil. A day without a year takes the year that
puts it inside the corpus's own span of publication dates. What the words around a date say
becomes the condition:
- "on/of/published ... October 7" (no cue): that day;
- "before / prior to / until October 7": published on or before that day;
- "after / since / following October 7": on or after it;
- "between October 7 and October 30": the range;
- "in October 2023" (a month, no day): the month.
Dates count only in a question that dates an article: one of them must follow words of publishing
("report", "published", "article", ...) within a few words; "Did the robot begin shipping on
October 16?" names an event's day, not a publication day, and gets no date condition.
Several plain days give a list of days (a temporal question names the day of each article it
compares). A bound turns everything into one range: from the lower bound (else the first day
named) to the upper bound (else the last day named), open where there is neither, so that "after
the report of October 7 ... the article of October 30" keeps both articles and "before the article
of December 5" everything up to that day.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime

from dateutil import parser as dateparser

MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
         r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
ORDINAL = r"(?:st|nd|rd|th)?"
DATE = re.compile(
    rf"\b(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b"
    rf"|\b(?P<md>{MONTH}\s+\d{{1,2}}{ORDINAL}(?:,?\s+\d{{4}})?)\b"
    rf"|\b(?P<dm>\d{{1,2}}{ORDINAL}\s+(?:of\s+)?{MONTH}(?:,?\s+\d{{4}})?)\b"
    rf"|\b(?P<my>{MONTH},?\s+\d{{4}})\b"
)
BEFORE = re.compile(r"\b(?:before|prior\s+to|until|till|up\s+to|earlier\s+than)\b", re.IGNORECASE)
AFTER = re.compile(r"\b(?:after|since|following|later\s+than)\b", re.IGNORECASE)
BETWEEN = re.compile(r"\bbetween\b", re.IGNORECASE)
CUE_WINDOW = 40   # characters before a date in which a cue word counts (a few words)
# Dates are publication dates only where the words before one of them speak of publishing: "the
# TechCrunch report on October 7", "published on", "the article of"; in "began shipping on October 16"
# or "the December 18 hearing" they date events, which no filter on publication dates should use.
PUBLICATION = re.compile(r"\b(?:publish\w*|report\w*|article\w*|stor(?:y|ies)|piece|coverage|covered|post\w*|"
                         r"dated|wrote|written|issue|edition|news|column|op-ed|editorial|blog|according)\b",
                         re.IGNORECASE)
PUBLICATION_WINDOW = 120


@dataclass(frozen=True)
class DateCondition:
    days: tuple[date, ...] = ()
    day_from: date | None = None
    day_to: date | None = None

    @property
    def is_empty(self) -> bool:
        return not self.days and self.day_from is None and self.day_to is None


@dataclass(frozen=True)
class _Mention:
    start: int
    first: date
    last: date          # == first for a day; the month's last day for a month
    cue: str            # "", "before", "after", "between"


def _year_for(month: int, day: int, span: tuple[date, date] | None) -> int:
    """The year that puts month/day inside the corpus's span (else the span's last year)."""
    if span is None:
        return date.today().year
    for year in range(span[0].year, span[1].year + 1):
        try:
            if span[0] <= date(year, month, day) <= span[1]:
                return year
        except ValueError:
            continue
    return span[1].year


def _parse(text: str, has_day: bool, span: tuple[date, date] | None) -> tuple[date, date] | None:
    cleaned = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", text).replace(" of ", " ")
    has_year = re.search(r"\d{4}", cleaned) is not None
    try:
        parsed = dateparser.parse(cleaned, default=datetime(2000, 1, 1)).date()
        if not has_year:
            parsed = parsed.replace(year=_year_for(parsed.month, parsed.day, span))
    except (ValueError, OverflowError):
        return None
    if has_day:
        return parsed, parsed
    return parsed.replace(day=1), parsed.replace(day=calendar.monthrange(parsed.year, parsed.month)[1])


def _cue(question: str, start: int) -> str:
    window = question[max(0, start - CUE_WINDOW):start]
    cues = [(m.end(), kind) for kind, pattern in (("before", BEFORE), ("after", AFTER), ("between", BETWEEN))
            for m in pattern.finditer(window)]
    return max(cues)[1] if cues else ""


@dataclass(frozen=True)
class DateExpression:
    """A date written in a text: where, and the days it names (one, or a month's)."""

    start: int
    end: int
    first: date
    last: date


def expressions(text: str, span: tuple[date, date] | None = None) -> list[DateExpression]:
    """Every date `text` writes that parses, in text order, whatever it dates."""
    found = []
    for m in DATE.finditer(text):
        kind = m.lastgroup
        parsed = _parse(m.group(kind), kind != "my", span)
        if parsed is not None:
            found.append(DateExpression(m.start(), m.end(), *parsed))
    return found


def mentions(question: str, span: tuple[date, date] | None = None) -> list[_Mention]:
    # once one date is a publication date, the question dates articles: every date counts
    if not any(PUBLICATION.search(question[max(0, m.start() - PUBLICATION_WINDOW):m.start()])
               for m in DATE.finditer(question)):
        return []
    return [_Mention(e.start, e.first, e.last, _cue(question, e.start)) for e in expressions(question, span)]


def date_condition(question: str, span: tuple[date, date] | None = None) -> DateCondition:
    """The publication-date condition `question` states (empty if it names no date)."""
    found = mentions(question, span)
    if not found:
        return DateCondition()
    lower = [m.first for m in found if m.cue == "after"]
    upper = [m.last for m in found if m.cue == "before"]
    if any(m.cue == "between" for m in found) and len(found) >= 2:
        return DateCondition(day_from=min(m.first for m in found), day_to=max(m.last for m in found))
    if lower or upper:   # one range: each end the bound, else the farthest day named on that side
        named = [m for m in found if m.cue not in ("before", "after")]
        firsts = [*lower, *(m.first for m in named)] if lower else [m.first for m in named]
        lasts = [*upper, *(m.last for m in named)] if upper else [m.last for m in named]
        start, end = min(firsts, default=None), max(lasts, default=None)
        if end is not None and lower and end < max(lower):   # "after" a day past every day named: open
            end = None
        if start is not None and upper and start > min(upper):
            start = None
        return DateCondition(day_from=start, day_to=end)
    days = [m.first for m in found if m.first == m.last]
    months = [m for m in found if m.first != m.last]
    if months:   # a month named: the range from the first to the last day or month named
        return DateCondition(day_from=min(m.first for m in found), day_to=max(m.last for m in found))
    return DateCondition(days=tuple(sorted(set(days))))
