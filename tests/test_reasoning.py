"""ircot and decompose: the stop rule, first-sentence extraction, the paragraph cap, BM25 escaping
of model output, a model failing mid-chain, the offline strategies on the bundled corpus, the
demonstrations left out of scoring, and the steps stored in Neo4j and walked back by the saved
Browser query. Every search runs against the real test server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mhgraph import cypher
from mhgraph.filters.sources import SourceCatalog
from mhgraph.graph.capabilities import detect
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.llm import LLM
from mhgraph.llm.endpoint import OpenAIChat
from mhgraph.reasoning import demonstrations
from mhgraph.reasoning.clauses import clauses
from mhgraph.reasoning.decomposer import LLMDecomposer, OfflineDecomposer
from mhgraph.reasoning.diagnostics import ReasoningChain
from mhgraph.reasoning.reasoner import (
    OFFLINE_LABEL,
    LLMReasoner,
    OfflineReasoner,
    Thought,
)
from mhgraph.reasoning.text import first_sentence, says_answer
from mhgraph.retrieval.decompose import DecomposeRetriever
from mhgraph.retrieval.ircot import IRCoTRetriever
from mhgraph.retrieval.vector import VectorRetriever
from mhgraph.text import sentences
from tests.conftest import SAMPLE, eval_run_dir, run_cli, wipe
from tests.scripted_llm_server import ScriptedServer, Step

SOURCES = ("Circuit Weekly", "Courtside Daily", "Global Finance Wire", "Harbor Ledger", "Northwind Tech Review",
           "The Meridian Post")
RECALL_QUESTION = ("Which company, reported by Northwind Tech Review as launching a $1,499 household robot that "
                   "folds laundry and by Circuit Weekly as recalling about 62,000 of those robots over a battery "
                   "fire risk, saw its shares slide 18 per cent according to Global Finance Wire?")


def test_first_sentence_keeps_one_sentence_only() -> None:
    assert first_sentence("Veltrix recalled 62,000 robots. Its shares fell.") == "Veltrix recalled 62,000 robots."
    assert first_sentence("  Dr. Okafor ruled on Oct. 3 that the $1.5 billion claim fails. Then x.") == \
        "Dr. Okafor ruled on Oct. 3 that the $1.5 billion claim fails."
    assert first_sentence("Circuit Weekly reported the recall\nSo the answer is: Veltrix.") == \
        "Circuit Weekly reported the recall"
    assert first_sentence("   ") == ""
    assert sentences('He said "it failed." Then it rained!') == ['He said "it failed."', "Then it rained!"]


def test_stop_rule_reads_answer_is() -> None:
    assert says_answer("So the answer is: Veltrix Robotics.")
    assert says_answer("The ANSWER  is Yes")
    assert not says_answer("Circuit Weekly answered the question of who is to blame.")


def test_clauses_split_where_the_question_turns_and_name_sources() -> None:
    catalog = SourceCatalog(SOURCES)
    parts = clauses("Does the Harbor Ledger article on the Solenne verdict report damages of $48 million, while "
                    "the Circuit Weekly article on the recall says that 62,000 robots were affected?", catalog)
    assert [p.sources for p in parts] == [("Harbor Ledger",), ("Circuit Weekly",)]
    assert "harbor" not in parts[0].terms and {"solenne", "verdict", "damages"} <= parts[0].terms
    # a piece that is only an attribution joins its neighbour
    parts = clauses("Who led the round, as reported by Harbor Ledger?", catalog)
    assert len(parts) == 1 and parts[0].sources == ("Harbor Ledger",)


def test_offline_decomposer_gives_at_most_n_from_the_question() -> None:
    decomposer = OfflineDecomposer(SourceCatalog(SOURCES))
    subs = decomposer.decompose(RECALL_QUESTION, 3)
    assert 1 < len(subs) <= 3 and len(set(subs)) == len(subs)
    assert decomposer.decompose(RECALL_QUESTION, 1) and len(decomposer.decompose(RECALL_QUESTION, 1)) == 1
    # fewer clauses than N: the whole question is asked too, first; never more parts than it has
    assert decomposer.decompose("Who won the final?", 4) == ["Who won the final?"]


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    return driver


class ScriptedReasoner:
    """A reasoner whose thoughts are given: the chain's mechanics without a model."""

    label = "scripted"

    def __init__(self, thoughts: list[Thought]) -> None:
        self.thoughts = list(thoughts)
        self.seen: list[int] = []

    def next(self, question, paragraphs, thoughts):
        self.seen.append(len(paragraphs))
        return self.thoughts.pop(0) if self.thoughts else Thought("So the answer is: Veltrix.", "", stop="answer")


def _ircot(driver, settings, reasoner, **kw) -> IRCoTRetriever:
    return IRCoTRetriever(driver, reasoner, settings.neo4j_database, corpus="sample", **kw)


def test_chain_stops_at_answer_and_each_step_is_a_hop(sample_graph, settings) -> None:
    reasoner = ScriptedReasoner([Thought("Circuit Weekly reported a battery recall.", "jury verdict patent"),
                                 Thought("So the answer is: Veltrix Robotics.", "", stop="answer")])
    result = _ircot(sample_graph, settings, reasoner).search(RECALL_QUESTION, top_k=2)
    assert [h.query for h in result.hops] == [RECALL_QUESTION, "jury verdict patent"]
    assert result.diagnostic(ReasoningChain).stop == "answer" and len(result.diagnostic(ReasoningChain).steps) == 2
    assert list(result.diagnostic(ReasoningChain).thoughts) == ["Circuit Weekly reported a battery recall.", "So the answer is: Veltrix Robotics."]
    first = {c.chunk_id for c in result.hops[0].chunks}
    added = {c.chunk_id for c in result.hops[1].chunks}
    assert len(first) == 2 and added and not first & added   # a step adds only what is new
    assert reasoner.seen == [2, 2 + len(added)]
    assert result.accumulated_ids(1) == [c.chunk_id for c in result.hops[0].chunks]


def test_paragraph_cap_and_step_limit(sample_graph, settings) -> None:
    many = [Thought(f"Step {i} about robots.", q) for i, q in
            enumerate(["robot recall battery", "shares slide", "jury verdict patent", "striker transfer", "Series B"])]
    result = _ircot(sample_graph, settings, ScriptedReasoner(many), max_paragraphs=7).search(RECALL_QUESTION, top_k=3)
    assert len(result.accumulated_ids(len(result.hops))) == 7 and result.diagnostic(ReasoningChain).stop == "paragraph cap"
    result = _ircot(sample_graph, settings, ScriptedReasoner(list(many)), max_steps=2).search(RECALL_QUESTION, top_k=1)
    assert len(result.hops) == 3 and result.diagnostic(ReasoningChain).stop == "step limit"


def _endpoint_llm(endpoint: ScriptedServer, tmp_path: Path) -> LLM:
    return LLM(OpenAIChat("scripted", base_url=endpoint.base_url, api_key="x", timeout=10, max_retries=0))


def test_model_output_is_escaped_for_bm25_and_a_failure_mid_chain_keeps_the_chain(sample_graph, settings,
                                                                                 tmp_path) -> None:
    hostile = 'Circuit Weekly: "recall" AND (battery OR fire) title:robot* ~2 \\ / NOT [62,000] {x} ^3 && || !'
    script = [Step(hostile + " Second sentence is dropped."), Step(status=500, error="the model crashed")]
    endpoint = ScriptedServer(script=script)
    try:
        llm = _endpoint_llm(endpoint, tmp_path)
        result = _ircot(sample_graph, settings, LLMReasoner(llm)).search(RECALL_QUESTION, top_k=3)
    finally:
        endpoint.close()
    assert len(result.hops) == 2 and result.hops[1].query == hostile   # searched as text, no Lucene error
    assert result.hops[1].chunks and result.hops[1].chunks[0].parent_id in {c.chunk_id for c in result.hops[0].chunks}
    assert result.diagnostic(ReasoningChain).stop == "model failed" and "HTTP 500" in result.diagnostic(ReasoningChain).failure
    assert llm.usage.calls == 2
    prompt = endpoint.requests[0]["messages"][-1]["content"]
    assert RECALL_QUESTION in prompt and result.hops[0].chunks[0].text.split()[0] in prompt


def test_llm_decomposer_hops_and_failure(sample_graph, settings, embedder, tmp_path) -> None:
    replies = [Step(json.dumps({"sub_questions": ["Which company recalled robots?", "Whose shares slid 18 per cent?",
                                                  "Which robot folds laundry?", "An extra one"]})),
               Step(status=500, error="down")]
    endpoint = ScriptedServer(script=replies)
    try:
        llm = _endpoint_llm(endpoint, tmp_path)
        vector = VectorRetriever(sample_graph, embedder, detect(sample_graph, settings.neo4j_database),
                                 settings.neo4j_database, corpus="sample", search_ratio=10)
        retriever = DecomposeRetriever(vector, LLMDecomposer(llm, demonstrations.load()), sub_questions=3)
        result = retriever.search(RECALL_QUESTION, top_k=2)
        failed = retriever.search(RECALL_QUESTION, top_k=2)
    finally:
        endpoint.close()
    assert [h.query for h in result.hops] == ["Which company recalled robots?", "Whose shares slid 18 per cent?",
                                              "Which robot folds laundry?"]
    ranking = result.final_ranking()
    assert len({c.chunk_id for c in ranking}) == len(ranking) <= 6
    assert [h.query for h in failed.hops] == [RECALL_QUESTION] and "HTTP 500" in failed.diagnostic(ReasoningChain).failure
    assert "Split into exactly 3 sub-questions" in endpoint.requests[0]["messages"][-1]["content"]


def test_offline_reasoner_on_the_bundled_corpus(sample_graph, settings) -> None:
    reasoner = OfflineReasoner(SourceCatalog.from_graph(sample_graph, settings.neo4j_database, "sample"))
    result = _ircot(sample_graph, settings, reasoner).search(RECALL_QUESTION, top_k=2)
    assert result.params["reasoner"] == OFFLINE_LABEL
    assert result.diagnostic(ReasoningChain).stop in {"supported", "clauses done", "step limit", "paragraph cap"}
    asked = [c.query() for c in clauses(RECALL_QUESTION, reasoner.catalog)]
    assert len(result.hops) > 1
    for hop, step in zip(result.hops[1:], result.diagnostic(ReasoningChain).steps[1:]):
        assert hop.query in asked and step["thought"]   # a clause of the question, and the sentence linking it
        assert step["parent"] in result.accumulated_ids(hop.index - 1)
    sources = {c.source for c in result.final_ranking()}
    assert {"Northwind Tech Review", "Circuit Weekly", "Global Finance Wire"} <= sources


def test_eval_leaves_out_demonstrations_and_stores_the_steps(sample_graph, settings, tmp_path) -> None:
    held = sorted(demonstrations.held_out())[0]
    questions = json.loads((SAMPLE / "questions.json").read_text())
    with_demo = [*questions, {**questions[0], "query": held}]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(with_demo))
    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_BASE_URL": "", "OPENAI_API_KEY": "",
           "MHGRAPH_LLM_BACKEND": "none"}
    result = run_cli(settings, "eval", "-m", "ircot", "-k", "3", "--corpus", "sample", "--questions", str(path),
                     "--run-id", "ircot-steps", "--no-progress", "--runs-dir", str(tmp_path / "runs"), env=env)
    assert result.returncode == 0, result.stderr
    run_dir = eval_run_dir(result.stdout)
    results = json.loads((run_dir / "results.json").read_text())
    summary = json.loads((run_dir / "report.json").read_text())
    assert len(results) == len(questions) and held not in {r["query"] for r in results}
    assert summary["reasoning"]["held_out"] == sorted(demonstrations.held_out())
    assert summary["reasoning"]["offline"] and summary["reasoning"]["strategy"] == OFFLINE_LABEL
    assert "(offline: no language model; not a model's figures)" in result.stdout
    assert summary["official"]["overall"]["hops"][0]["hop"] == 1

    # the steps round-trip: one Step per hop, in order, with the chunks each fetched and the chunk
    # that led to each thought; the saved Browser query walks them
    db = settings.neo4j_database
    chained = next(r for r in results if len(r["hops"]) > 1)
    steps = sample_graph.execute_query(
        "MATCH (:Question {id: $q})-[:STEP {run: 'ircot-steps'}]->(s:Step) "
        "OPTIONAL MATCH (s)-[f:FETCHED]->(c:Chunk) OPTIONAL MATCH (p:Chunk)-[:PROMPTED]->(s) "
        "WITH s, p, c ORDER BY c.id RETURN s.hop AS hop, s.query AS query, s.thought AS thought, "
        "p.id AS parent, collect(c.id) AS fetched ORDER BY hop", q=chained["id"], database_=db).records
    assert [r["hop"] for r in steps] == [h["hop"] for h in chained["hops"]]
    for record, hop in zip(steps, chained["hops"]):
        assert record["query"] == hop["query"] and record["fetched"] == sorted(c["chunk_id"] for c in hop["chunks"])
        assert record["parent"] == (hop["chunks"][0]["parent_id"] if hop["hop"] > 1 and hop["chunks"] else
                                    record["parent"])
    walked = sample_graph.execute_query(cypher.load("browser/ircot_chain"), run="ircot-steps", question=chained["id"],
                                        database_=db).records[0]
    assert len(walked["chain"]) == len(chained["hops"]) - 1
    assert len(walked["steps"]) == sum(len(h["chunks"]) for h in chained["hops"])
    # deleting the run removes its steps
    assert run_cli(settings, "eval", "--delete-run", "ircot-steps", env=env).returncode == 0
    left = sample_graph.execute_query("MATCH (s:Step {run: 'ircot-steps'}) RETURN count(s) AS n", database_=db)
    assert left.records[0]["n"] == 0


def test_query_prints_the_chain_offline(sample_graph, settings, tmp_path) -> None:
    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_BASE_URL": "", "OPENAI_API_KEY": "",
           "MHGRAPH_LLM_BACKEND": "none"}
    result = run_cli(settings, "query", RECALL_QUESTION, "-m", "decompose", "-k", "2", "--sub-questions", "2", env=env)
    assert result.returncode == 0, result.stderr
    assert "decomposer: offline decomposer (no language model)" in result.stdout
    assert result.stdout.count("\nhop ") == 2


def test_eval_records_the_searched_corpus_chunking(sample_graph, settings, embedder, tmp_path) -> None:
    """IR-CoT is compared at the study's 1,000/200-token chunks: a report names the chunking of the
    corpus it searched, not the current settings'."""
    import dataclasses

    wide = dataclasses.replace(settings, chunk_size=600, chunk_overlap=100, corpus="sample-600")
    with pytest.warns(UserWarning, match="exceeds what all-MiniLM-L6-v2 embeds"):
        ingest_corpus(SAMPLE / "corpus.json", wide, sample_graph, embedder=embedder, progress=False)
    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    try:
        result = run_cli(settings, "eval", "-m", "ircot", "-k", "2", "--corpus", "sample-600", "--sample", "--limit",
                         "2", "--no-trace", "--no-progress", "--runs-dir", str(tmp_path / "runs"), env=env)
    finally:   # the module's other tests search the graph's only corpus
        assert run_cli(settings, "corpora", "delete", "sample-600", env=env).returncode == 0
    assert result.returncode == 0, result.stderr
    summary = json.loads((eval_run_dir(result.stdout) / "report.json").read_text())
    assert (summary["corpus"], summary["chunk_size"], summary["chunk_overlap"]) == ("sample-600", 600, 100)
    assert "chunks 600/100 tokens" in result.stdout


def test_a_step_naming_outlets_searches_only_their_chunks(sample_graph, settings) -> None:
    thought = Thought("Harbor Ledger covered the trial.", "jury verdict robots recall", sources=("Harbor Ledger",))
    steps = [thought, Thought("So the answer is: x.", "", stop="answer")]
    narrowed = _ircot(sample_graph, settings, ScriptedReasoner(list(steps))).search(RECALL_QUESTION, top_k=3)
    assert narrowed.hops[1].chunks and {c.source for c in narrowed.hops[1].chunks} == {"Harbor Ledger"}
    assert narrowed.hops[1].filters == {"source": ["Harbor Ledger"]} and narrowed.hops[0].filters is None
    assert narrowed.params["step_sources"] is True
    wide = _ircot(sample_graph, settings, ScriptedReasoner(list(steps)), step_sources=False).search(RECALL_QUESTION,
                                                                                                  top_k=3)
    assert {c.source for c in wide.hops[1].chunks} != {"Harbor Ledger"}   # the original searches every outlet
    # a model's thought names its outlets through the graph's Source names
    catalog = SourceCatalog.from_graph(sample_graph, settings.neo4j_database, "sample")
    endpoint = ScriptedServer(default=lambda body: Step("The Harbor Ledger's report says the jury ruled. More."))
    try:
        reasoner = LLMReasoner(_endpoint_llm(endpoint, Path()), catalog=catalog)
        said = reasoner.next(RECALL_QUESTION, narrowed.hops[0].chunks, [])
    finally:
        endpoint.close()
    assert said.text == "The Harbor Ledger's report says the jury ruled." and said.sources == ("Harbor Ledger",)
