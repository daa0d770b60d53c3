"""The method contract: a method defined here, outside the package (a retriever returning a fixed
ranking, its own options class with one option, its own diagnostics record), runs through the CLI
(`query`, `eval` with its report section and trace rows, `--help`, `config`, `methods`) without
touching any file of the package; its option is a flag, an environment variable and a TOML key.

The CLI subprocesses import this module as a plugin ($MHGRAPH_PLUGINS)."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import neo4j
import pytest

from mhgraph.options import MethodOptions, option
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.records import to_chunks
from mhgraph.retrieval import registry
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import Diagnostics, Hop, RetrievalResult, RunContext
from tests.conftest import REPO, SAMPLE, run_cli, wipe

NAME = "fixed-ranking"
PLUGIN = {"MHGRAPH_PLUGINS": "tests.test_method_contract", "PYTHONPATH": str(REPO)}
FIRST_CHUNKS = """
MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) WHERE c.corpus = $corpus
RETURN c.id AS chunk_id, c.text AS text, d.id AS document_id, d.title AS title, d.source AS source,
       d.published_at AS published_at, toFloat($top_k - c.index) AS score
ORDER BY c.id LIMIT $top_k
"""


class FixedOptions(MethodOptions):
    repeat: int = option(1, "Hops, each the same fixed ranking.", ge=1)


@dataclass(frozen=True)
class FixedNote(Diagnostics):
    kind = "fixed_note"

    note: str

    def to_json(self) -> dict[str, Any]:
        return {"fixed_note": self.note}

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        return [f"fixed note: {self.note}"]

    @classmethod
    def summarise(cls, records: Mapping[str, "FixedNote"], run: RunContext) -> dict[str, Any]:
        return {"noted": len(records), "notes": sorted({r.note for r in records.values()})}

    @classmethod
    def report_section(cls, summary: Mapping[str, Any]) -> list[str]:
        return ["## Fixed notes", "", f"{summary['noted']} questions noted: {', '.join(summary['notes'])}.", ""]

    @classmethod
    def write_traces(cls, records: Mapping[str, "FixedNote"], run: RunContext) -> None:
        run.driver.execute_query(
            "UNWIND $rows AS row MATCH (q:Question {id: row.question}) "
            "CREATE (q)-[:NOTED {run: $run}]->(:FixedNote {run: $run, text: row.note})",
            rows=[{"question": qid, "note": r.note} for qid, r in records.items()], run=run.run_id,
            database_=run.database)


class FixedRetriever(Retriever):
    name = NAME

    def __init__(self, driver: neo4j.Driver, database: str | None, corpus: str, repeat: int) -> None:
        self.driver, self.database, self.corpus, self.repeat = driver, database, corpus, repeat

    @property
    def params(self) -> dict[str, Any]:
        return {"corpus": self.corpus, "repeat": self.repeat}

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        records, _, _ = self.driver.execute_query(FIRST_CHUNKS, corpus=self.corpus, top_k=top_k,
                                                  database_=self.database)
        hops = [Hop(index=i, chunks=to_chunks(records), query=question) for i in range(1, self.repeat + 1)]
        return RetrievalResult(question, self.name, hops, params={"top_k": top_k, **self.params},
                               diagnostics=(FixedNote(f"repeated {self.repeat}"),))


def build(ctx: BuildContext, options: FixedOptions) -> FixedRetriever:
    return FixedRetriever(ctx.graph.driver, ctx.graph.database, ctx.graph.corpus, options.repeat)


METHOD = MethodSpec(name=NAME, description="the first chunks by id, whatever the question (a contract test)",
                    options=FixedOptions, build=build, diagnostics=(FixedNote,))


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    from mhgraph.ingest.pipeline import ingest_corpus

    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    return driver


def cli(settings, *args: str, env: dict[str, str] | None = None):
    done = run_cli(settings, *args, env={**PLUGIN, **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_option_is_a_flag_an_environment_variable_and_a_toml_key(settings, tmp_path: Path) -> None:
    help_text = " ".join(cli(settings, "query", "--help").split())
    assert "--fixed-ranking-repeat INTEGER RANGE fixed-ranking: hops, each the same fixed ranking (default 1)." \
        in help_text and NAME in help_text   # and --method offers it
    assert NAME in cli(settings, "eval", "--help")
    assert f"{NAME:10} the first chunks by id" in cli(settings, "methods")
    config = tmp_path / "c.toml"
    config.write_text(f"[{NAME}]\nrepeat = 3\n")
    table = cli(settings, "--config", str(config), "config").split(f"[{NAME}]\n")[1].splitlines()
    assert table[0].split()[:3] == ["repeat", "=", "3"] and table[0].endswith("[file]")
    table = cli(settings, "config", env={"MHGRAPH_FIXED_RANKING_REPEAT": "4"}).split(f"[{NAME}]\n")[1].splitlines()
    assert table[0].split()[:3] == ["repeat", "=", "4"] and table[0].endswith("[env]")
    bad = run_cli(settings, "config", env={**PLUGIN, "MHGRAPH_FIXED_RANKING_REPEAT": "0"})
    assert bad.returncode == 1 and bad.stderr.strip() == (
        "error: setting 'fixed-ranking.repeat' from $MHGRAPH_FIXED_RANKING_REPEAT: Input should be greater than or "
        "equal to 1, got '0'")


def test_query_prints_its_hops_and_its_diagnostics(sample_graph, settings) -> None:
    out = cli(settings, "query", "anything at all", "--method", NAME, "-k", "3", "--fixed-ranking-repeat", "2")
    assert f"{NAME} on corpus 'sample': 2 hop(s)" in out and "fixed note: repeated 2" in out
    assert out.count("\nhop ") == 2


def test_eval_writes_its_report_section_and_traces(sample_graph, settings, tmp_path: Path) -> None:
    out = cli(settings, "eval", "--sample", "--method", NAME, "-k", "4", "--run-id", "contract",
              "--runs-dir", str(tmp_path), "--no-progress", env={"MHGRAPH_FIXED_RANKING_REPEAT": "2"})
    assert "## Fixed notes" in out and "questions noted: repeated 2." in out
    report = json.loads((tmp_path / "contract" / "report.json").read_text())
    assert report["method"] == NAME and report["params"]["repeat"] == 2
    assert report["fixed_note"]["noted"] == report["questions"]
    results = json.loads((tmp_path / "contract" / "results.json").read_text())
    assert {r["fixed_note"] for r in results} == {"repeated 2"}
    notes, _, _ = sample_graph.execute_query(
        "MATCH (:EvalRun {id: 'contract'})-[:ASKED]->(q:Question)-[:NOTED {run: 'contract'}]->(n:FixedNote) "
        "RETURN count(n) AS n")
    assert notes[0]["n"] == report["questions"]
    assert "contract" in cli(settings, "runs", "list")
    cli(settings, "runs", "delete", "contract")   # a method's own trace nodes go with its run
    left, _, _ = sample_graph.execute_query("MATCH (n:FixedNote) RETURN count(n) AS n")
    assert left[0]["n"] == 0


METHOD_WORDS = ("vector", "bm25", "hybrid", "metarag", "treehop", "ircot", "decompose", "claims")
# also names of what every method shares (the vector index, the claim layer): only a whole string
# equal to them counts
SHARED_WORDS = ("vector", "claims")
# code shared by every method: it may not single one out
SHARED = ["mhgraph/config.py", *sorted(str(p.relative_to(REPO)) for d in ("eval", "cli")
                                       for p in (REPO / "mhgraph" / d).glob("*.py"))]
# command groups a method registers as its own (MethodSpec.commands: its models' training, its layer)
OWNED_BY_A_METHOD = {"mhgraph/" + ref.split(":")[0].removeprefix("mhgraph.").replace(".", "/") + ".py"
                     for spec in registry.specs() for ref in spec.commands}


@pytest.mark.parametrize("path", [p for p in SHARED if p not in OWNED_BY_A_METHOD])
def test_shared_code_names_no_method(path: str) -> None:
    """No string, name or attribute in eval/, cli/ or config.py is a method's name or starts with
    one (docstrings and comments may mention methods as examples)."""
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words = [w for w in node.value.replace("-", " ").replace("_", " ").replace('"', " ").split()]
            texts = [node.value] if len(words) > 12 else words   # long messages: only whole-value matches
            found += [(node.lineno, t) for t in texts if t.lower() in METHOD_WORDS
                      and (t.lower() not in SHARED_WORDS or t == node.value)]
        for name in ((node.id,) if isinstance(node, ast.Name) else (node.attr,) if isinstance(node, ast.Attribute)
                     else (node.name,) if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else ()):
            found += [(node.lineno, name) for part in name.lower().split("_") if part in METHOD_WORDS
                      and part not in SHARED_WORDS]
    assert not found, f"{path} names methods: {found}"
