"""Read a corpus: the MultiHop-RAG JSON article list, or the flat `Title:`/`Passage:` text form.

Everything is parsed and validated before anything is written, so bad input changes nothing in
the graph. Errors name the file and the line (and record, for JSON).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Iterator, Literal

from mhgraph.errors import InputError

Format = Literal["json", "flat"]
SEPARATOR = "<endofpassage>"
METADATA_FIELDS = ("author", "source", "category", "url")


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

    @property
    def id(self) -> str:
        """A stable content hash: the same article always gets the same id."""
        key = [self.title, self.body, self.source, self.url,
               self.published_at.isoformat() if self.published_at else None]
        return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()[:32]


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


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, "", f"cannot read file: {exc.strerror or exc}") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(path, f"{line}", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); convert the file to UTF-8") from exc


def detect_format(path: Path, text: str) -> Format:
    if path.suffix.lower() == ".json" or text.lstrip().startswith("["):
        return "json"
    return "flat"


def read_corpus(path: Path | str, fmt: Format | None = None) -> Corpus:
    path = Path(path)
    text = read_text(path)
    fmt = fmt or detect_format(path, text)
    corpus = Corpus(path=path, format=fmt)
    entries = _json_articles(path, text) if fmt == "json" else _flat_articles(path, text)
    for article in entries:
        if article is None:
            corpus.skipped_empty += 1
        else:
            corpus.articles.append(article)
    return corpus


# -- flat text ------------------------------------------------------------------------------
_SEPARATOR = re.compile(re.escape(SEPARATOR), re.IGNORECASE)


def _flat_articles(path: Path, text: str) -> Iterator[Article | None]:
    # The sentinel may share a line with text on either side; entries are what lies between.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    pos = 0
    for match in [*_SEPARATOR.finditer(text), None]:
        end = match.start() if match else len(text)
        if text[pos:end].strip():
            yield _flat_entry(path, text[pos:end].split("\n"), line_of(text, pos))
        pos = match.end() if match else end


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
def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def json_records(path: Path, text: str, what: str = "articles") -> Iterator[tuple[int, int, object]]:
    """Yield (record number, line, value) of the top-level array of `what`, keeping positions for errors."""
    decoder = json.JSONDecoder()
    try:
        pos = len(text) - len(text.lstrip())
        if not text[pos:pos + 1] == "[":
            raise InputError(path, f"{line_of(text, pos)}", f"expected a JSON list of {what}")
        pos += 1
        record, line, counted = 0, 1, 0
        while True:
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if text[pos:pos + 1] == "]":
                if rest := text[pos + 1:].strip():
                    at = pos + 1 + text[pos + 1:].index(rest[0])
                    raise InputError(path, f"{line_of(text, at)}", f"unexpected text after the JSON list: {rest[:20]!r}")
                return
            if record and text[pos:pos + 1] == ",":
                pos += 1
                while pos < len(text) and text[pos] in " \t\r\n":
                    pos += 1
            elif record:
                raise json.JSONDecodeError("expected ',' or ']'", text, pos)
            value, end = decoder.raw_decode(text, pos)
            record += 1
            # counted on from the previous record: line_of from the start each time is quadratic
            line += text.count("\n", counted, pos)
            counted = pos
            yield record, line, value
            pos = end
    except json.JSONDecodeError as exc:
        raise InputError(path, f"{exc.lineno}", f"invalid JSON: {exc.msg} (column {exc.colno})") from exc


def _json_articles(path: Path, text: str) -> Iterator[Article | None]:
    for record, line, value in json_records(path, text):
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
        if not fields["body"]:
            yield None
            continue
        yield Article(
            title=fields["title"], body=fields["body"], line=line, published_at=published,
            **{k: fields[k] or None for k in METADATA_FIELDS},
        )
