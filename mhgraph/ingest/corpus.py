"""Read a corpus: the MultiHop-RAG JSON article list, or the flat `Title:`/`Passage:` text form.

Files are parsed as they are read (a corpus ten times larger needs no more memory); ingest checks
the whole file in a first pass before it writes anything, so bad input changes nothing in the
graph. Errors name the file and the line (and record, for JSON).
"""

from __future__ import annotations

import hashlib
import json
import re
from array import array
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Iterator, Literal, get_args

import numpy as np

from mhgraph.config import KEY_RULES, check_key_rule
from mhgraph.errors import InputError
from mhgraph.ingest.textfile import TextWindow, plain_suffix

Format = Literal["json", "jsonl", "flat"]
FORMATS: tuple[str, ...] = get_args(Format)
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")
SEPARATOR = "<endofpassage>"
METADATA_FIELDS = ("author", "source", "category", "url")
# A document's key (config.KEY_RULES) may name any of these, or any field of a JSON record.
ARTICLE_FIELDS = ("title", *METADATA_FIELDS, "published_at")


@dataclass(frozen=True)
class Article:
    title: str
    body: str
    line: int                      # where the article starts in its file (1-based)
    source: str | None = None
    author: str | None = None
    category: str | None = None
    url: str | None = None
    published_at: datetime | None = None
    key_value: str | None = None   # the value of a JSON field named by --key that is no article field

    @property
    def id(self) -> str:
        """A stable content hash: the same article always gets the same id."""
        key = [self.title, self.body, self.source, self.url,
               self.published_at.isoformat() if self.published_at else None]
        return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()[:32]


def article_key(article: Article, rule: str) -> str | None:
    """The article's key under `rule` (None when the article lacks the field)."""
    if rule == "auto":
        return article.url or article.title
    if rule in ARTICLE_FIELDS:
        value = getattr(article, rule)
        return value.isoformat() if isinstance(value, datetime) else value
    return article.key_value


@dataclass
class Corpus:
    path: Path
    format: Format
    articles: list[Article] = field(default_factory=list)
    skipped_empty: int = 0


def parse_datetime(value: str) -> datetime:
    """ISO 8601 date or date-time; naive values are taken as UTC."""
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = datetime.combine(date.fromisoformat(text), datetime.min.time())  # may raise again
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class CorpusFile:
    """A corpus file and its format. Its entries are parsed as the file is read, never all held:
    `check()` validates the whole file (a first pass, before anything is written), `articles()`
    reads it again for the pass that writes."""

    path: Path
    format: Format
    key: str = "auto"       # the document key rule (KEY_RULES or a field name)

    def entries(self) -> Iterator[Article | None]:
        """Each entry in file order; None for one with an empty body."""
        if self.format == "flat":
            return _flat_articles(self.path)
        return _json_articles(self.path, self.key, lines=self.format == "jsonl")

    def articles(self) -> Iterator[Article]:
        return (article for article in self.entries() if article is not None)

    def check(self) -> tuple[int, int]:
        """Validate every entry (raising InputError at the first bad one): (articles, empty entries).
        Every article must have a key, and two different articles may not share one."""
        if self.format == "flat" and self.key not in ("auto", "title"):
            raise InputError(self.path, "", f"a flat corpus has titles only: its document key is the title, "
                             f"not {self.key!r} (--key title or auto)")
        articles = empty = 0
        # 8-byte hashes of each article's key and version and its line: 24 bytes per article, so
        # memory stays flat however large the file (a dict of keys would hold every key)
        keys, versions, lines = array("Q"), array("Q"), array("Q")
        for article in self.entries():
            if article is None:
                empty += 1
                continue
            articles += 1
            key = article_key(article, self.key)
            if not key:
                raise InputError(self.path, f"{article.line}", f"article '{article.title[:60]}' has no {self.key} "
                                 "to key it by (--key; auto falls back to the title)")
            keys.append(_hash64(key))
            versions.append(_hash64(article.id))
            lines.append(article.line)
        if (twins := _same_key(keys, versions, lines)) is not None:
            first, second = twins
            title = next(a.title for a in self.articles() if a.line == second)
            raise InputError(self.path, f"{second}", f"article '{title[:60]}' has the same {self.key} key as the "
                             f"article at line {first}, with other content: choose a key that tells them apart "
                             "(--key title, url or a field)")
        return articles, empty


def _hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _same_key(keys: array, versions: array, lines: array) -> tuple[int, int] | None:
    """(first line, second line) of the earliest-found pair of articles with one key and two
    versions (the same article twice is stored once); None if there is none."""
    k = np.frombuffer(keys, dtype=np.uint64)
    v = np.frombuffer(versions, dtype=np.uint64)
    order = np.lexsort((np.frombuffer(lines, dtype=np.uint64), k))   # by key, then by line
    clash = (k[order][1:] == k[order][:-1]) & (v[order][1:] != v[order][:-1])
    if not clash.any():
        return None
    found = [(int(lines[order[i + 1]]), i) for i in np.flatnonzero(clash)]
    second, i = min(found)
    start = i   # the key's first article: walk back over its run of equal keys
    while start > 0 and k[order[start - 1]] == k[order[i]]:
        start -= 1
    return int(lines[order[start]]), second


def named_json_lines(path: Path) -> bool:
    """Whether `path`'s name says JSON Lines (.jsonl or .ndjson, gzipped or not)."""
    return plain_suffix(path) in JSON_LINES_SUFFIXES


def open_corpus(path: Path | str, fmt: Format | None = None, key: str = "auto") -> CorpusFile:
    """The corpus file at `path` (gzipped if its name ends in .gz), its format detected unless given
    (json: a .json name or a leading '['; jsonl: a .jsonl or .ndjson name or a leading '{'; else
    flat), its documents keyed by `key`."""
    path = Path(path)
    with TextWindow(path) as window:  # raises InputError for a file that cannot be read
        window.skip_whitespace()
        first = window.peek()
        if not first:   # rather than "expected a JSON list" or "no articles to ingest"
            raise InputError(path, "", "the file is empty" + (" (whitespace only)" if window.pos else ""))
    suffix = plain_suffix(path)
    detected = ("jsonl" if named_json_lines(path) or (first == "{" and suffix != ".json") else
                "json" if suffix == ".json" or first == "[" else "flat")
    return CorpusFile(path, fmt or detected, check_key_rule(key))


def read_corpus(path: Path | str, fmt: Format | None = None) -> Corpus:
    """The whole corpus in memory (for tests and benchmarks; ingest streams it instead)."""
    file = open_corpus(path, fmt)
    corpus = Corpus(path=file.path, format=file.format)
    for article in file.entries():
        if article is None:
            corpus.skipped_empty += 1
        else:
            corpus.articles.append(article)
    return corpus


# -- flat text ------------------------------------------------------------------------------
_SEPARATOR = re.compile(re.escape(SEPARATOR), re.IGNORECASE)


def _flat_articles(path: Path) -> Iterator[Article | None]:
    # The sentinel may share a line with text on either side; entries are what lies between.
    with TextWindow(path, universal_newlines=True) as window:
        while True:
            match = _SEPARATOR.search(window.text, window.pos)
            while match is None and window.fill():
                match = _SEPARATOR.search(window.text, window.pos)
            end = match.start() if match else len(window.text)
            if window.text[window.pos:end].strip():
                yield _flat_entry(path, window.text[window.pos:end].split("\n"), window.line(window.pos))
            if match is None:
                return
            window.pos = match.end()
            window.consume()


def _flat_entry(path: Path, entry: list[str], first_line: int) -> Article | None:
    offset = next(k for k, line in enumerate(entry) if line.strip())
    head_line = first_line + offset
    head = entry[offset].strip()
    if not head.startswith("Title:"):
        raise InputError(path, f"{head_line}", f"entry does not start with 'Title:' (found {head[:40]!r})")
    title = head[len("Title:"):].strip()
    if not title:
        raise InputError(path, f"{head_line}", "empty Title")
    passage_at = next((k for k in range(offset + 1, len(entry)) if entry[k].lstrip().startswith("Passage:")), None)
    if passage_at is None:
        raise InputError(path, f"{head_line}", f"entry '{title[:60]}' has no 'Passage:' line")
    for k in range(offset + 1, passage_at):
        if entry[k].strip():
            raise InputError(path, f"{first_line + k}", f"unexpected text between Title and Passage: {entry[k].strip()[:40]!r}")
    for k in range(passage_at + 1, len(entry)):
        if entry[k].lstrip().startswith("Title:"):
            raise InputError(path, f"{first_line + k}", f"a second 'Title:' inside entry '{title[:60]}': "
                             f"missing {SEPARATOR} before it?")
    first = entry[passage_at].lstrip()[len("Passage:"):].strip()
    body = "\n".join([first, *entry[passage_at + 1:]]).strip()
    if not body:
        return None
    return Article(title=title, body=body, line=head_line)


# -- JSON -----------------------------------------------------------------------------------
class _JSONErrors:
    """A JSON syntax error (or nesting too deep for the decoder) raised as InputError at its line."""

    def __init__(self, path: Path, window: TextWindow) -> None:
        self.path, self.window = path, window

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, _: object) -> None:
        if isinstance(exc, json.JSONDecodeError):
            line, column = self.window.location(exc.pos)
            raise InputError(self.path, f"{line}", f"invalid JSON: {exc.msg} (column {column})") from exc
        if isinstance(exc, RecursionError):
            raise InputError(self.path, f"{self.window.line(self.window.pos)}", "invalid JSON: nested too deeply") \
                from None


def json_records(path: Path, what: str = "articles") -> Iterator[tuple[int, int, object]]:
    """Yield (record number, line, value) of the top-level array of `what`, reading the file as it goes."""
    decoder = json.JSONDecoder()
    with TextWindow(path) as window, _JSONErrors(path, window):
        window.skip_whitespace()
        if window.peek() != "[":
            lines = " (JSON Lines, one object a line, are read from a .jsonl file)" if window.peek() == "{" else ""
            raise InputError(path, f"{window.line(window.pos)}", f"expected a JSON list of {what}{lines}")
        window.pos += 1
        record = 0
        while True:
            window.skip_whitespace()
            if window.peek() == "]":
                window.pos += 1
                window.skip_whitespace()
                if window.peek():
                    window.ensure(64)
                    rest = window.text[window.pos:window.pos + 64].rstrip()[:20]
                    raise InputError(path, f"{window.line(window.pos)}",
                                     f"unexpected text after the JSON list: {rest!r}")
                return
            if record:
                if window.peek() != ",":
                    raise json.JSONDecodeError("expected ',' or ']'", window.text, window.pos)
                window.pos += 1
                window.skip_whitespace()
            value, end = _decode_next(decoder, window)
            record += 1
            yield record, window.line(window.pos), value
            window.pos = end
            window.consume()


def json_lines_records(path: Path, what: str = "articles") -> Iterator[tuple[int, int, object]]:
    """Yield (record number, line, value) of a JSON Lines file of `what` (one JSON value per line,
    blank lines skipped), reading the file as it goes."""
    decoder = json.JSONDecoder()
    with TextWindow(path) as window, _JSONErrors(path, window):
        record = 0
        while True:
            window.skip_whitespace()
            if not window.peek():
                if not record:
                    raise InputError(path, "", f"no {what} in the file")
                return
            start, line = window.pos, window.line(window.pos)
            end_of_line = _line_end(window)
            try:   # the line alone: a record left open is an error at its own line, not a later one's
                value, end = decoder.raw_decode(window.text[start:end_of_line])
            except json.JSONDecodeError as exc:
                _, column = window.location(start + exc.pos)
                open_ = (exc.pos >= len(window.text[start:end_of_line].rstrip())
                         or exc.msg.startswith("Unterminated string"))   # a line break inside a string
                raise InputError(path, f"{line}", f"invalid JSON: {exc.msg} (column {column})" + (
                    ": the line ends inside the record (JSON Lines: one whole value a line)" if open_ else "")) \
                    from None
            record += 1
            if window.text[start + end:end_of_line].strip():
                raise InputError(path, f"{line}", f"text after the record on its line: one JSON value a line "
                                 f"(JSON Lines), or give a JSON list of {what}")
            window.pos = end_of_line
            yield record, line, value
            window.consume()


def _line_end(window: TextWindow) -> int:
    """The index of the newline ending the line at window.pos (or of the file's end), reading more
    of the file until it is in the window."""
    searched = window.pos
    while (found := window.text.find("\n", searched)) < 0:
        searched = len(window.text)
        if not window.fill():
            return len(window.text)
    return found


def _decode_next(decoder: json.JSONDecoder, window: TextWindow) -> tuple[object, int]:
    """The JSON value at window.pos, decoding more of the file while it may continue past the window:
    a syntax error at the window's end (or an unterminated string) may be a value cut short, and a
    number or literal that reaches the end may go on. Any other error is raised at once, so a bad
    record early in a large file is reported without reading the rest."""
    while True:
        try:
            value, end = decoder.raw_decode(window.text, window.pos)
        except json.JSONDecodeError as exc:
            cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(window.text) - 16
            if cut and window.fill():
                continue
            raise
        follows = window.text[end:end + 1]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if (follows == "" or (number and (follows in ".eE+-" or follows.isdigit()))) and window.fill():
            continue
        return value, end


def _json_articles(path: Path, key: str = "auto", *, lines: bool = False) -> Iterator[Article | None]:
    own_key = key not in KEY_RULES and key not in ARTICLE_FIELDS   # a field of the record only
    for record, line, value in (json_lines_records if lines else json_records)(path):
        where = f"{line} (record {record})"
        if not isinstance(value, dict):
            raise InputError(path, where, f"expected an article object, got {type(value).__name__}")
        fields: dict[str, str | None] = {}
        for name in ("title", "body", *METADATA_FIELDS, "published_at"):
            v = value.get(name)
            if v is not None and not isinstance(v, str):
                raise InputError(path, where, f"field '{name}' must be a string, got {type(v).__name__}")
            fields[name] = v.strip() if isinstance(v, str) else None
        if not fields["title"]:
            raise InputError(path, where, "missing field 'title'")
        if "body" not in value:
            raise InputError(path, where, f"article '{fields['title'][:60]}' has no field 'body'")
        published = None
        if fields["published_at"]:
            try:
                published = parse_datetime(fields["published_at"])
            except ValueError:
                raise InputError(path, where, f"field 'published_at': bad date {fields['published_at']!r} (use ISO 8601)") from None
        if not fields["body"]:   # an empty entry is skipped and counted, key or none
            yield None
            continue
        key_value = None
        if own_key:
            raw = value.get(key)
            if isinstance(raw, bool) or not isinstance(raw, (str, int)) or not str(raw).strip():
                raise InputError(path, where, f"field '{key}' (the document key, --key) must be a non-empty string "
                                 f"or integer, got {json.dumps(raw)[:40]}")
            key_value = str(raw).strip()
        yield Article(
            title=fields["title"], body=fields["body"], line=line, published_at=published, key_value=key_value,
            **{k: fields[k] or None for k in METADATA_FIELDS},
        )
