"""Bad input: a one-line error naming the file and line/record, non-zero exit, the graph untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mhgraph.ingest.pipeline import ingest_corpus
from tests.conftest import SAMPLE, run_cli
from tests.graph_state import snapshot

GOOD = [{"title": "Good one", "body": "A fine body.", "source": "Harbor Ledger",
         "published_at": "2023-10-01T10:00:00+00:00"}]


def _json(records: list) -> str:
    return json.dumps(records, indent=2)


CASES = {
    # name: (file name, content (str or bytes), expected fragment after the path)
    "wrong encoding": ("latin1.txt", "Title: Caf\u00e9\nPassage: ok\n<endofpassage>\nTitle: Na\u00efve\nPassage: x\n".encode("latin-1"),
                       ":1: not valid UTF-8"),
    "entry without Title": ("notitle.txt", "Title: One\nPassage: first\n<endofpassage>\n\nPassage: orphan text\n",
                            ":5: entry does not start with 'Title:'"),
    "entry without Passage": ("nopassage.txt", "Title: One\nPassage: first\n<endofpassage>\nTitle: Two\nno passage here\n",
                              ":4: entry 'Two' has no 'Passage:' line"),
    "invalid JSON": ("broken.json", _json(GOOD)[:-1] + ',\n  {"title": "x", "body": }\n]', ":9: invalid JSON: Expecting value (column 26)"),
    "bad date": ("baddate.json", _json(GOOD + [{"title": "Later", "body": "b", "published_at": "2023-13-45"}]),
                 ":8 (record 2): field 'published_at': bad date '2023-13-45'"),
    "record without body": ("nobody.json", _json(GOOD + [{"title": "No body here"}]),
                            ":8 (record 2): article 'No body here' has no field 'body'"),
    "title with a newline": ("newline.json", _json(GOOD + [{"title": "Line one\nLine two"}]),
                             ":8 (record 2): article 'Line one Line two' has no field 'body'"),
    "record without title": ("notitle.json", _json([{"body": "text only"}]), ":2 (record 1): missing field 'title'"),
    "JSON Lines, two records on a line": ("two.jsonl", json.dumps(GOOD[0]) + "\n" + json.dumps(GOOD[0]) + " {}\n",
                                          ":2: text after the record on its line: one JSON value a line"),
    "JSON Lines, a bad record": ("bad.jsonl", json.dumps(GOOD[0]) + '\n{"title": "x", "body": }\n',
                                 ":2: invalid JSON: Expecting value (column 24)"),
    "JSON Lines, a record left open": ("open.jsonl", json.dumps(GOOD[0]) + '\n{"title": "x", "body": "y"\n' +
                                       json.dumps(GOOD[0]) + "\n",
                                       ":2: invalid JSON: Expecting ',' delimiter (column 27): the line ends inside "
                                       "the record (JSON Lines: one whole value a line)"),
    "JSON Lines, a record over two lines": ("two-lines.jsonl", '{"title": "x",\n "body": "y"}\n',
                                            ":1: invalid JSON: Expecting property name enclosed in double quotes "
                                            "(column 15): the line ends inside the record"),
    "JSON Lines, a line break inside a string": ("break.jsonl", '{"title": "x", "body": "one\ntwo"}\n',
                                                 ":1: invalid JSON: Unterminated string starting at (column 24): "
                                                 "the line ends inside the record"),
    "JSON Lines, a record not an object": ("list.jsonl", json.dumps(GOOD[0]) + "\n[1]\n",
                                           ":2 (record 2): expected an article object, got list"),
    "nested too deeply": ("deep.json", "[" * 100_000, ":1: invalid JSON: nested too deeply"),
    "not a list": ("object.json", '{"title": "x"}', ":1: expected a JSON list of articles"),
    "missing separator": ("noseparator.txt", "Title: One\nPassage: first\nTitle: Two\nPassage: second\n",
                          ":3: a second 'Title:' inside entry 'One': missing <endofpassage> before it?"),
    "text after the JSON list": ("trailing.json", _json(GOOD) + "\nextra", ":9: unexpected text after the JSON list: 'extra'"),
    "empty file": ("empty.txt", "", ": the file is empty"),
    "empty JSON file": ("empty.json", " \n\n", ": the file is empty (whitespace only)"),
    "only empty passages": ("hollow.txt", "Title: A\nPassage:\n<endofpassage>\nTitle: B\nPassage:   \n",
                            ": no articles to ingest (2 empty entries)"),
}


@pytest.fixture
def populated(empty_graph, settings, embedder):
    ingest_corpus(SAMPLE / "corpus.json", settings, empty_graph, embedder=embedder, progress=False)
    return snapshot(empty_graph, settings.neo4j_database)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_reported_and_changes_nothing(case: str, populated, driver, settings, tmp_path: Path) -> None:
    name, content, expected = CASES[case]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run_cli(settings, "ingest", str(path), "--no-progress")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {path}{expected}"), lines[0]
    assert snapshot(driver, settings.neo4j_database) == populated


@pytest.mark.parametrize("target", ["missing.json", "a-directory"])
def test_unreadable_file(target: str, populated, driver, settings, tmp_path: Path) -> None:
    (tmp_path / "a-directory").mkdir()
    path = tmp_path / target
    result = run_cli(settings, "ingest", str(path), "--no-progress")
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: cannot read file: {'No such file or directory' if target == 'missing.json' else 'Is a directory'}"
    ]
    assert snapshot(driver, settings.neo4j_database) == populated


def test_empty_passages_are_skipped_and_counted(empty_graph, settings, tmp_path: Path) -> None:
    path = tmp_path / "with-empty.txt"
    path.write_text("Title: Full\nPassage: Words here.\n<endofpassage>\nTitle: Hollow\nPassage:\n\n<endofpassage>\n"
                    "Title: Also full\nPassage: More words.\n")
    result = run_cli(settings, "ingest", str(path), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "documents 2 keyed by auto (added 2, replaced 0, unchanged 0, removed 0; empty skipped 1)" in result.stdout
    titles = empty_graph.execute_query("MATCH (d:Document) RETURN d.title AS t ORDER BY t",
                                       database_=settings.neo4j_database).records
    assert [r["t"] for r in titles] == ["Also full", "Full"]


def test_flat_separator_anywhere_crlf_and_bom(empty_graph, settings, tmp_path: Path) -> None:
    path = tmp_path / "windows.txt"
    path.write_bytes("\ufeffTitle: A\r\nPassage: a.<endofpassage>Title: B\r\nPassage: b\r\n<EndOfPassage>\r\n".encode())
    result = run_cli(settings, "ingest", str(path), "--no-progress")
    assert result.returncode == 0, result.stderr
    rows = empty_graph.execute_query("MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) RETURN d.title AS t, c.text AS x "
                                     "ORDER BY t", database_=settings.neo4j_database).records
    assert [(r["t"], r["x"]) for r in rows] == [("A", "a."), ("B", "b")]


def test_bad_option_values_are_usage_errors(settings) -> None:
    for args in (["ingest", "--batch-size", "0"], ["query", "x", "-k", "0"], ["eval", "-m", "vector", "--workers", "0"]):
        result = run_cli(settings, *args)
        assert result.returncode == 2 and "Invalid value" in result.stderr, (args, result.stderr)


def test_retrieval_before_ingest_says_what_to_do(empty_graph, settings, embedder) -> None:
    for method in ("vector", "bm25"):
        result = run_cli(settings, "query", "anything", "--method", method)
        assert result.returncode == 1
        assert result.stderr.strip().splitlines() == ["error: the graph holds no corpus: run 'mhgraph ingest' first"]
    # a corpus whose index was dropped: the index is named
    ingest_corpus(SAMPLE / "corpus.json", settings, empty_graph, embedder=embedder, progress=False)
    expected = {
        "chunk_embedding": "error: the graph has no index 'chunk_embedding': run 'mhgraph ingest' first",
        "chunk_text_sample": "error: the graph has no fulltext index 'chunk_text_sample' for corpus 'sample' (made "
                             "by ingest since corpora have their own): ingest any file again, unchanged documents "
                             "are skipped"}
    for method, index in (("vector", "chunk_embedding"), ("bm25", "chunk_text_sample")):
        empty_graph.execute_query("DROP INDEX $name", name=index, database_=settings.neo4j_database)
        result = run_cli(settings, "query", "anything", "--method", method)
        assert result.returncode == 1
        assert result.stderr.strip().splitlines() == [expected[index]]


def test_query_with_another_embedding_model_is_refused(empty_graph, settings) -> None:
    from mhgraph.embeddings.sentence import resolve_model

    model_path = resolve_model("all-MiniLM-L6-v2")  # the same weights under another name
    ingested = run_cli(settings, "ingest", str(SAMPLE / "corpus.json"), "--model", model_path, "--no-progress")
    assert ingested.returncode == 0, ingested.stderr
    result = run_cli(settings, "query", "Who bought Ferreira?", "--model", "all-MiniLM-L6-v2")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: the chunks of corpus 'sample' were embedded with {model_path}, not all-MiniLM-L6-v2: "
        f"pass --model {model_path} (or leave the model unset to use the corpus's own)"]
    env_set = run_cli(settings, "query", "Who bought Ferreira?", env={"MHGRAPH_EMBEDDING_MODEL": "all-MiniLM-L6-v2"})
    assert env_set.returncode == 1 and "not all-MiniLM-L6-v2" in env_set.stderr
    # unset, the corpus's own model is used
    assert run_cli(settings, "query", "Who bought Ferreira?").returncode == 0
    assert run_cli(settings, "query", "Who bought Ferreira?", "--model", model_path).returncode == 0
