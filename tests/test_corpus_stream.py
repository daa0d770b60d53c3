"""Corpus files are parsed as they are read: any block size gives the same articles and the same
error locations, and parsing holds about one block however large the file."""

from __future__ import annotations

import dataclasses
import json
import tracemalloc
from pathlib import Path

import pytest

import mhgraph.ingest.textfile as textfile
from mhgraph.errors import InputError
from mhgraph.ingest.corpus import open_corpus, read_corpus
from tests.conftest import SAMPLE
from tests.test_ingest_errors import CASES

# 1 byte splits every multi-byte character and every CRLF; 7 and 64 cut records and separators
# at varied places
BLOCKS = [1, 7, 64]


def _articles(path: Path) -> list[tuple]:
    return [dataclasses.astuple(a) for a in read_corpus(path).articles]


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("name", ["corpus.json", "corpus.txt"])
def test_any_block_size_reads_the_same_articles(name: str, block: int, monkeypatch) -> None:
    whole = _articles(SAMPLE / name)
    monkeypatch.setattr(textfile, "BLOCK_BYTES", block)
    assert _articles(SAMPLE / name) == whole
    if name == "corpus.json":
        bodies = [a["body"].strip() for a in json.loads((SAMPLE / name).read_text(encoding="utf-8"))]
        assert [a[1] for a in whole] == [b for b in bodies if b]


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("name", ["corpus.jsonl", "corpus.jsonl.gz", "corpus.ndjson", "no-extension"])
def test_json_lines_read_as_the_json_list_does(name: str, block: int, monkeypatch, tmp_path: Path) -> None:
    import gzip

    records = json.loads((SAMPLE / "corpus.json").read_text(encoding="utf-8"))
    text = "\n".join(json.dumps(r) for r in records[:5]) + "\n\n" + "\n".join(json.dumps(r) for r in records[5:]) + "\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    monkeypatch.setattr(textfile, "BLOCK_BYTES", block)
    corpus = read_corpus(path)
    assert corpus.format == "jsonl"    # by its name, or (no extension) by its leading '{'
    listed = read_corpus(SAMPLE / "corpus.json").articles
    assert [dataclasses.replace(a, line=0) for a in corpus.articles] == [dataclasses.replace(a, line=0) for a in listed]
    # each record's line is its line in the file, past the blank one
    assert [a.line for a in corpus.articles][:7] == [1, 2, 3, 4, 5, 7, 8]


@pytest.mark.parametrize("block", BLOCKS)
def test_newlines_and_characters_split_across_blocks(block: int, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(textfile, "BLOCK_BYTES", block)
    path = tmp_path / "mixed.txt"
    path.write_bytes("\ufeffTitle: Caf\u00e9 \u2014 \U0001F600\r\nPassage: a\r\r\nb\rc<endofpassage>\r\n"
                     "Title: Two\nPassage: d\n".encode())
    first, second = read_corpus(path).articles
    assert (first.title, first.body, first.line) == ("Caf\u00e9 \u2014 \U0001F600", "a\n\nb\nc", 1)
    assert (second.title, second.body, second.line) == ("Two", "d", 6)


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("case", sorted(c for c in CASES if "empty" not in c))
def test_errors_name_the_same_line_whatever_the_block(case: str, block: int, monkeypatch, tmp_path: Path) -> None:
    name, content, expected = CASES[case]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    monkeypatch.setattr(textfile, "BLOCK_BYTES", block)
    with pytest.raises(InputError) as error:
        open_corpus(path).check()
    assert str(error.value).startswith(f"{path}{expected}")


def test_an_error_deep_in_a_large_file_names_its_line(tmp_path: Path) -> None:
    records = [{"title": f"Article {i}", "body": "word " * 200} for i in range(5000)]
    records[4321]["published_at"] = "not a date"
    path = tmp_path / "large.json"
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    line = json.dumps(records, indent=1).split("\n").index(" {", 4321 * 4) + 1
    with pytest.raises(InputError, match=rf":{line} \(record 4322\): field 'published_at': bad date"):
        open_corpus(path).check()


@pytest.mark.parametrize("fmt", ["json", "jsonl", "flat"])
def test_parsing_holds_a_window_not_the_file(fmt: str, tmp_path: Path) -> None:
    """About 1 MiB of text is held whether the file has 5 MiB or 50: memory stays flat as the corpus grows."""
    peaks = {}
    for copies in (1, 10):
        path = tmp_path / f"{copies}.{'txt' if fmt == 'flat' else fmt}"
        articles = [{"title": f"Copy {c} article {i}", "body": f"Body {i} of copy {c}. " + "text " * 1000}
                    for c in range(copies) for i in range(1000)]
        if fmt == "json":
            path.write_text(json.dumps(articles), encoding="utf-8")
        elif fmt == "jsonl":
            path.write_text("\n".join(json.dumps(a) for a in articles), encoding="utf-8")
        else:
            path.write_text("\n<endofpassage>\n".join(f"Title: {a['title']}\nPassage: {a['body']}" for a in articles),
                            encoding="utf-8")
        del articles
        tracemalloc.start()
        try:
            assert open_corpus(path).check() == (copies * 1000, 0)
            peaks[copies] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert path.stat().st_size > copies * 4 * 2**20
    assert peaks[10] < 8 * 2**20, peaks
    assert peaks[10] < 1.5 * peaks[1], peaks


@pytest.mark.parametrize("name, content", [("empty.json", b""), ("empty.txt", b""), ("blank.json", b" \n\t\r\n"),
                                           ("blank.txt", b"\n\n  \n")])
def test_an_empty_file_is_called_empty(name: str, content: bytes, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        open_corpus(path)
    assert str(error.value) == f"{path}: the file is empty" + (" (whitespace only)" if content else "")


@pytest.mark.parametrize("block", [1, 2, 3, 4, 8])
def test_numbers_and_literals_cut_by_a_block_end_are_read_whole(block: int, monkeypatch, tmp_path: Path) -> None:
    from mhgraph.ingest.corpus import json_records

    path = tmp_path / "values.json"
    path.write_text('[1.5, 2e3, -7, true, null, "x"]')
    monkeypatch.setattr(textfile, "BLOCK_BYTES", block)
    assert [value for _, _, value in json_records(path)] == [1.5, 2000.0, -7, True, None, "x"]


def test_a_syntax_error_early_in_a_large_file_is_raised_without_reading_the_rest(tmp_path: Path) -> None:
    records = json.dumps([{"title": f"t{i}", "body": "w " * 500} for i in range(20000)], indent=1)
    path = tmp_path / "early-error.json"
    path.write_text(records.replace('"title": "t2"', '"title": "t2" "oops"', 1), encoding="utf-8")
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=r":11 \(record|:11: invalid JSON: Expecting ',' delimiter"):
            open_corpus(path).check()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert path.stat().st_size > 15 * 2**20 and peak < 4 * 2**20, peak
