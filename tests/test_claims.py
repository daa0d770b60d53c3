"""Claims: extraction on crafted chunks (pronouns, opinions, several entities) and name keys."""

from __future__ import annotations

import re

import pytest

from mhgraph.claims.names import name_key, node_key

pytest.importorskip("spacy", reason="the claims extra (pip install -e '.[claims]') is not installed")

from mhgraph.claims.extract import OfflineClaimExtractor  # noqa: E402
from mhgraph.claims.diagnostics import ClaimTrail

RECALL = ("Veltrix Robotics said on Tuesday it would recall 62,000 Atlas Home robots over a battery fire risk. "
          "I think this is a terrible decision. Its shares slid 18 per cent on Wednesday, according to Global "
          "Finance Wire. The company blamed Corvane Cells, an Ohio-based supplier, for a defective batch. "
          "Chief executive Maya Okafor said she would seek compensation. What happens next? It was a wonderful day. "
          "We believe the recall was handled well by the board in 2023.")


@pytest.fixture(scope="module")
def extractor() -> OfflineClaimExtractor:
    return OfflineClaimExtractor()


def test_pronouns_and_vague_references_are_resolved(extractor) -> None:
    claims = extractor.extract(RECALL, "Veltrix recalls laundry robots")
    texts = [c.text for c in claims]
    assert texts[0] == ("Veltrix Robotics said on Tuesday Veltrix Robotics would recall 62,000 Atlas Home robots "
                        "over a battery fire risk.")
    assert texts[1].startswith("Veltrix Robotics' shares slid 18 per cent")
    assert texts[2].startswith("Veltrix Robotics blamed Corvane Cells")   # "The company"
    assert texts[3] == "Chief executive Maya Okafor said Maya Okafor would seek compensation."
    assert not any(" it " in t or t.startswith(("It ", "Its ")) or " she " in t for t in texts)


def test_opinions_and_questions_are_dropped(extractor) -> None:
    texts = [c.text for c in extractor.extract(RECALL)]
    assert len(texts) == 4
    assert not any("terrible" in t or "wonderful" in t or "believe" in t or t.endswith("?") for t in texts)
    # a quoted opinion is someone's reported words, not the writer's: kept when it is a fact about them
    quoted = extractor.extract('Maya Okafor told reporters on Monday: "I think Veltrix will recover by 2025."')
    assert [c.target for c in quoted] == ["Maya Okafor"]


def test_targets_and_topics_with_several_entities(extractor) -> None:
    claims = extractor.extract(RECALL, "Veltrix recalls laundry robots")
    assert [c.target for c in claims] == ["Veltrix Robotics", "Veltrix Robotics", "Veltrix Robotics", "Maya Okafor"]
    assert claims[1].topic == "share slide" and claims[2].topic == "corvane cells"
    assert claims[0].topic == "atlas home robots"   # of the clause reported, not "say"
    # a sentence whose pronoun has nothing to resolve to is no claim: it would not stand alone
    assert extractor.extract("She said the deal closed on Friday for $3 billion.") == []


def test_no_claim_runs_across_a_paragraph_break(extractor) -> None:
    # a heading without a full stop ran on into the next paragraph's sentence, and gave it its target
    text = ("Atlas Home deals at Amazon\n\nVeltrix Robotics cut the Atlas Home robot to $499 on Friday.\n \n"
            "Its shares rose 4 per cent in New York.")
    claims = extractor.extract(text, "Robot deals this week")
    assert [(c.text, c.target) for c in claims] == [
        ("Veltrix Robotics cut the Atlas Home robot to $499 on Friday.", "Veltrix Robotics"),
        ("Veltrix Robotics' shares rose 4 per cent in New York.", "Veltrix Robotics")]   # resolved across the break
    # a single line break may be a hard wrap: the sentence goes on
    wrapped = extractor.extract("Veltrix Robotics cut the Atlas Home robot\nto $499 on Friday.")
    assert [c.text for c in wrapped] == ["Veltrix Robotics cut the Atlas Home robot\nto $499 on Friday."]


def test_topics_hold_a_content_word(extractor) -> None:
    def topics(text: str) -> list[str | None]:
        return [c.topic for c in extractor.extract(text)]

    # past a verb with nothing of its own ("be", "go"), the topic is the preposition's object
    assert topics("Maya Okafor went on trial in Boston on Monday.") == ["trial"]
    assert topics("Veltrix Robotics is unable to ship 4,000 robots.") == ["unable"]   # the complement alone
    assert topics("Veltrix Robotics recalled 62,000 robots.") == ["robots"]
    assert topics("Veltrix Robotics slipped in 2023.") == ["slip"]
    # a verb of its own is the topic before where or when: no Topic "wednesday" or "october"
    assert topics("Veltrix Robotics fell 5% on Wednesday.") == ["fall"]
    assert topics("Maya Okafor spoke in Boston in October.") == ["speak"]
    assert topics("Harbor Bank was in trouble on Wednesday.") == ["trouble"]
    # nothing said of the target but "be" or a pronoun: a claim without a topic, not the Topic "be"
    assert topics("Harbor Bank was there in 2020.") == [None]
    assert topics("Veltrix Robotics has it in 2023.") == [None]


def test_name_keys_merge_spellings() -> None:
    assert name_key("The Verge's") == name_key("the verge") == "verge"
    assert name_key("Veltrix Robotics, Inc.") == name_key("VELTRIX ROBOTICS") == "veltrix robotics"
    assert name_key("Sam Bankman-Fried") == "sam bankman fried"
    assert name_key("Co") == "co"   # a name that is only a suffix stays


def test_a_node_is_stored_under_its_name_key_or_the_key_it_was_merged_into() -> None:
    merged = {"fed": "federal reserve"}
    assert node_key("The Fed's", merged) == "federal reserve" and node_key("The Verge's", merged) == "verge"
    assert node_key("?!", merged) == "?!"                # no name key: the name in lower case


# -- the claim layer in Neo4j ------------------------------------------------------------------
TWO_ARTICLES = [
    {"title": "Veltrix recalls laundry robots", "author": "A. Writer", "source": "Circuit Weekly",
     "published_at": "2023-10-02T10:00:00+00:00", "category": "technology", "url": "https://example.org/1",
     "body": RECALL},
    {"title": "Veltrix shares tumble", "author": "B. Writer", "source": "Global Finance Wire",
     "published_at": "2023-10-04T10:00:00+00:00", "category": "business", "url": "https://example.org/2",
     "body": "Veltrix Robotics lost $1.2 billion in market value on Wednesday. Analysts at Harbor Bank cut their "
             "target for Veltrix Robotics to $40. It expects a second-quarter loss of $85 million. Harbor Bank was "
             "there in 2020."},
]


def _ingested(articles, name, driver, settings, embedder, tmp_path):
    """`articles` ingested as corpus `name` into the emptied graph."""
    import json

    from mhgraph.ingest.pipeline import ingest_corpus

    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(articles))
    ingest_corpus(path, settings, driver, embedder=embedder, progress=False)
    return driver


@pytest.fixture
def two_articles(empty_graph, settings, embedder, tmp_path):
    return _ingested(TWO_ARTICLES, "two", empty_graph, settings, embedder, tmp_path)


def _graph_claims(driver, database):
    records = driver.execute_query(
        "MATCH (c:Chunk)-[:HAS_CLAIM]->(k:Claim)-[:TARGETS]->(t:Target) OPTIONAL MATCH (k)-[:ABOUT]->(p:Topic) "
        "RETURN k.id AS id, k.text AS text, t.name AS target, p.name AS topic, c.id AS chunk ORDER BY id",
        database_=database).records
    return [r.data() for r in records]


def test_build_writes_claims_bridges_and_is_idempotent(two_articles, settings, embedder, extractor) -> None:
    from mhgraph.claims.build import build_claims

    db = settings.neo4j_database
    first = build_claims(two_articles, db, "two", extractor, embedder, progress=False)
    stored = _graph_claims(two_articles, db)
    assert first.claims == len(stored) >= 6 and first.chunks_done == first.chunks == first.processed
    # both articles make claims about Veltrix Robotics: one Target, the bridge between them
    assert first.bridges == 1
    veltrix = two_articles.execute_query(
        "MATCH (t:Target {corpus: 'two', key: 'veltrix robotics'})<-[:TARGETS]-(k:Claim) "
        "RETURN count(DISTINCT k.document_id) AS documents, count(k) AS claims", database_=db).records[0]
    assert veltrix["documents"] == 2 and veltrix["claims"] >= 4
    assert "Veltrix Robotics expects a second-quarter loss of $85 million." in {c["text"] for c in stored}
    # a claim whose sentence names no topic targets its entity and is about no Topic
    assert {"text": "Harbor Bank was there in 2020.", "topic": None, "target": "Harbor Bank"}.items() \
        <= next(c for c in stored if c["text"].startswith("Harbor Bank was")).items()
    topics = {c["topic"] for c in stored if c["topic"] is not None}
    assert first.topics == len(topics) and None not in {c["target"] for c in stored}
    # claims are embedded with the corpus's model, in a vector index
    dims = two_articles.execute_query("MATCH (k:Claim) RETURN size(k.embedding) AS n LIMIT 1",
                                      database_=db).records[0]["n"]
    assert dims == embedder.dimensions
    # a second build has nothing to do; a forced re-build gives the same graph, no duplicates
    again = build_claims(two_articles, db, "two", extractor, embedder, progress=False)
    assert again.processed == 0 and _graph_claims(two_articles, db) == stored
    two_articles.execute_query("MATCH (c:Chunk) REMOVE c.claims_by", database_=db)
    rebuilt = build_claims(two_articles, db, "two", extractor, embedder, progress=False)
    assert rebuilt.processed == first.chunks and _graph_claims(two_articles, db) == stored
    assert (rebuilt.topics, rebuilt.targets, rebuilt.bridges) == (first.topics, first.targets, first.bridges)


def test_build_resumes_where_it_stopped(two_articles, settings, embedder, extractor) -> None:
    from mhgraph.claims.build import build_claims

    db = settings.neo4j_database
    part = build_claims(two_articles, db, "two", extractor, embedder, limit=1, progress=False)
    assert part.processed == 1 and part.chunks_done == 1 < part.chunks
    rest = build_claims(two_articles, db, "two", extractor, embedder, progress=False)
    assert rest.processed == part.chunks - 1 and rest.chunks_done == rest.chunks
    whole = _graph_claims(two_articles, db)
    two_articles.execute_query("MATCH (c:Chunk) REMOVE c.claims_by", database_=db)
    build_claims(two_articles, db, "two", extractor, embedder, progress=False)
    assert _graph_claims(two_articles, db) == whole


def test_near_duplicates_star_clustering_numbers_and_lexical_guard() -> None:
    """Which pairs merge, on crafted unit vectors: similar and spelled alike, or a short form with one
    expansion; never across numbers or between names that only embed close; the heaviest name
    keeps, no chaining."""
    import numpy as np

    from mhgraph.claims.merge import lexically_close, near_duplicates

    keys = ["sam bankman fried", "bankman fried", "manchester united", "manchester city", "q3 2023", "q4 2023",
            "harbor bank", "harbour bank", "openai", "open ai", "a", "a b", "a b c"]
    rng = np.random.default_rng(0)
    base = rng.normal(size=64)
    vectors = np.array([base + rng.normal(scale=0.05, size=64) for _ in keys])
    vectors[8] = rng.normal(size=64)   # "openai" embeds far from "open ai": the same letters still merge
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    weights = [5, 1, 3, 2, 1, 1, 1, 4, 1, 2, 1, 1, 3]
    merged = {(keys[a], keys[k]) for a, k, _ in near_duplicates(keys, vectors, weights, threshold=0.8)}
    # "a" is in two longer names ("a b", "a b c"): a short form with two expansions joins neither
    assert merged == {("bankman fried", "sam bankman fried"), ("harbor bank", "harbour bank"),
                      ("openai", "open ai"), ("a b", "a b c")}
    assert near_duplicates(keys, vectors, weights, threshold=0.999) == [(8, 9, pytest.approx(
        float(vectors[8] @ vectors[9])))]   # only the spelling merge is left
    assert lexically_close("kansas city chiefs", "chiefs") and not lexically_close("bank of america",
                                                                                     "bank of england")
    # after an ingest replaced documents, only pairs with a new name are merged: the old pairs stand
    touched = {keys.index("harbor bank"), keys.index("open ai")}
    merged = {(keys[a], keys[k]) for a, k, _ in near_duplicates(keys, vectors, weights, threshold=0.8,
                                                                   touched=touched)}
    assert merged == {("harbor bank", "harbour bank"), ("openai", "open ai")}


SBF_ARTICLES = [
    {"title": "Bankman-Fried takes the stand", "author": "A. Writer", "source": "Circuit Weekly",
     "published_at": "2023-10-27T10:00:00+00:00", "category": "business", "url": "https://example.org/3",
     "body": "Sam Bankman-Fried testified on Friday that he had made mistakes at FTX. "
             "Sam Bankman-Fried faces seven counts of fraud."},
    {"title": "Verdict in the FTX trial", "author": "B. Writer", "source": "Global Finance Wire",
     "published_at": "2023-11-03T10:00:00+00:00", "category": "business", "url": "https://example.org/4",
     "body": "Bankman-Fried was found guilty on all seven counts on November 2. "
             "Bankman-Fried will be sentenced in March 2024."},
]


@pytest.fixture
def sbf_articles(empty_graph, settings, embedder, tmp_path):
    return _ingested(SBF_ARTICLES, "sbf", empty_graph, settings, embedder, tmp_path)


def test_near_duplicate_targets_merge_into_a_bridge(sbf_articles, settings, embedder, extractor) -> None:
    """"Sam Bankman-Fried" and "Bankman-Fried" (two articles) become one Target: a bridge the name keys
    alone miss. Rebuilding keeps the merge; retrieval finds the claims by either name."""
    from mhgraph.claims.build import build_claims
    from mhgraph.claims.merge import alias_map
    from mhgraph.claims.targets import OfflineTargetFinder
    from mhgraph.filters.sources import SourceCatalog
    from mhgraph.retrieval.claims import ClaimsRetriever

    db = settings.neo4j_database
    apart = build_claims(sbf_articles, db, "sbf", extractor, embedder, merge_threshold=None, progress=False)
    assert apart.bridges == 0 and not apart.merges
    sbf_articles.execute_query("MATCH (c:Chunk) REMOVE c.claims_by", database_=db)
    merged = build_claims(sbf_articles, db, "sbf", extractor, embedder, progress=False)
    assert merged.bridges == 1 and merged.targets < apart.targets
    targets = {m.label: m for m in merged.merges}["Target"]
    assert ("Bankman-Fried", "Sam Bankman-Fried") in {(a, k) for a, k, _ in targets.examples}
    node = sbf_articles.execute_query(
        "MATCH (t:Target {corpus: 'sbf', key: 'sam bankman fried'})<-[:TARGETS]-(k:Claim) "
        "RETURN t.aliases AS aliases, t.alias_keys AS keys, count(DISTINCT k.document_id) AS documents",
        database_=db).records[0]
    assert node["aliases"] == ["Bankman-Fried"] and node["keys"] == ["bankman fried"] and node["documents"] == 2
    assert alias_map(sbf_articles, db, "sbf") == {"bankman fried": "sam bankman fried"}
    assert "merged" in "\n".join(merged.lines())
    stored = _graph_claims(sbf_articles, db)
    sbf_articles.execute_query("MATCH (c:Chunk) REMOVE c.claims_by", database_=db)
    again = build_claims(sbf_articles, db, "sbf", extractor, embedder, progress=False)
    assert _graph_claims(sbf_articles, db) == stored and again.bridges == 1
    assert all(m.merged == 0 and m.embedded == 0 for m in again.merges)   # written to the kept node; names kept
    finder = OfflineTargetFinder(SourceCatalog.from_graph(sbf_articles, db, "sbf"), extractor.nlp)
    retriever = ClaimsRetriever(sbf_articles, embedder, finder, db, corpus="sbf")
    result = retriever.search("When will Bankman-Fried be sentenced after he testified?", top_k=4)
    assert "sam bankman fried" in {c["target"] for c in result.diagnostic(ClaimTrail).claims if c["hop"] == 1}
    assert len({c.document_id for h in result.hops for c in h.chunks}) == 2   # both articles, through the alias


def test_claims_build_command_on_the_sample(settings, empty_graph, tmp_path) -> None:
    from tests.conftest import run_cli

    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    ingested = run_cli(settings, "ingest", "--no-progress", "--claims", env=env)   # the layer at ingest
    assert ingested.returncode == 0, ingested.stderr
    assert "claims of corpus 'sample' by offline claim extractor v3 (spaCy, no language model)" in ingested.stdout
    assert "bridges" in ingested.stdout and "into near-duplicate names (cosine >= 0.80)" in ingested.stdout
    stored = int(re.search(r"claims +(\d+) \(", ingested.stdout).group(1))
    assert stored > 0
    again = run_cli(settings, "claims", "build", "--no-progress", env=env)   # on the existing graph: done already
    assert again.returncode == 0, again.stderr
    assert "(0 extracted now)" in again.stdout and f"claims    {stored} (" in again.stdout
    merged = run_cli(settings, "claims", "merge", "--threshold", "0.5", "--examples", "2", env=env)
    assert merged.returncode == 0, merged.stderr
    assert "names of corpus 'sample' merged at cosine >= 0.50" in merged.stdout and "bridges" in merged.stdout


def test_claim_bridge_retrieval_crosses_articles(two_articles, settings, embedder, extractor) -> None:
    from mhgraph.claims.build import build_claims
    from mhgraph.claims.targets import OfflineTargetFinder
    from mhgraph.filters.sources import SourceCatalog
    from mhgraph.retrieval.claims import ClaimsRetriever

    db = settings.neo4j_database
    build_claims(two_articles, db, "two", extractor, embedder, progress=False)
    finder = OfflineTargetFinder(SourceCatalog.from_graph(two_articles, db, "two"), extractor.nlp)
    question = "Which supplier did Circuit Weekly say Veltrix Robotics blamed for the Atlas Home recall?"
    assert "Circuit Weekly" not in finder.question_targets(question)   # an outlet is no target
    retriever = ClaimsRetriever(two_articles, embedder, finder, db, corpus="two")
    result = retriever.search(question, top_k=3)
    assert result.params["target_finder"] == finder.label and result.diagnostic(ClaimTrail).targets
    first = result.diagnostic(ClaimTrail).claims[:len(result.hops[0].chunks)]
    assert first and all(c["hop"] == 1 for c in first) and len({c["claim"] for c in first}) == len(first)
    # hop 2 follows a bridge: each claim reached through a target a hop-1 claim named, its chunk
    # linked to that claim's chunk
    bridged = [c for c in result.diagnostic(ClaimTrail).claims if c["hop"] == 2]
    hop1_chunks = {c.chunk_id for c in result.hops[0].chunks}
    assert all(c["bridged_from"] in hop1_chunks for c in bridged)
    if len(result.hops) > 1:
        assert all(c.parent_id in hop1_chunks for c in result.hops[1].chunks)
        assert [c.rank for c in result.hops[1].chunks] == list(range(1, len(result.hops[1].chunks) + 1))
    found = {c.document_id for h in result.hops for c in h.chunks}
    assert len(found) == 2   # evidence from both articles


def test_claims_method_without_claims_says_so(settings, empty_graph, tmp_path) -> None:
    from tests.conftest import run_cli

    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    assert run_cli(settings, "ingest", "--no-progress", env=env).returncode == 0
    result = run_cli(settings, "query", "Who recalled robots?", "-m", "claims", env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == "error: corpus 'sample' has no claims: run 'mhgraph claims build --corpus sample' first"


def test_claims_eval_traces_walk_question_target_claim_chunk(settings, empty_graph, tmp_path) -> None:
    import json

    from mhgraph import cypher
    from tests.conftest import eval_run_dir, run_cli

    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    assert run_cli(settings, "ingest", "--no-progress", env=env).returncode == 0
    assert run_cli(settings, "claims", "build", "--no-progress", env=env).returncode == 0
    result = run_cli(settings, "eval", "--sample", "-m", "claims", "-k", "4", "--limit", "6", "--run-id", "claims-run",
                     "--no-progress", "--runs-dir", str(tmp_path / "runs"), env=env)
    assert result.returncode == 0, result.stderr
    run_dir = eval_run_dir(result.stdout)
    results = json.loads((run_dir / "results.json").read_text())
    db = settings.neo4j_database
    used = empty_graph.execute_query("MATCH (:Question)-[u:USED_CLAIM {run: 'claims-run'}]->(:Claim) RETURN count(u) AS n",
                                     database_=db).records[0]["n"]
    assert used == sum(len(r["claims"]) for r in results) > 0
    question = next(r for r in results if r["claims"])
    walked = empty_graph.execute_query(cypher.load("browser/claim_paths"), run="claims-run", question=question["id"],
                                       database_=db).records[0]
    assert len(walked["used"]) >= len(question["claims"]) and walked["held"]
    assert run_cli(settings, "eval", "--delete-run", "claims-run", env=env).returncode == 0
    left = empty_graph.execute_query("MATCH ()-[u:USED_CLAIM|ASKED_TARGET {run: 'claims-run'}]->() RETURN count(u) AS n",
                                     database_=db).records[0]["n"]
    assert left == 0


# -- questions generated from claims: their FROM_CLAIM edges in the traces ------------------------
GRAPH_COUNTS = """
CALL () { MATCH (n) UNWIND labels(n) AS label WITH label, count(*) AS n ORDER BY label
          RETURN collect([label, n]) AS nodes }
CALL () { MATCH ()-[r]->() WITH type(r) AS type, count(*) AS n ORDER BY type RETURN collect([type, n]) AS relationships }
RETURN nodes, relationships
"""


def test_generated_questions_link_their_claims_and_runs_delete_cleanly(empty_graph, settings, embedder, extractor,
                                                                      tmp_path) -> None:
    """A question file in `mhgraph generate`'s format (the benchmark's fields, `claims` with the ids of
    the sample's claim layer, fields of its own) through a real `mhgraph eval`: each question gets
    (:Question)-[:FROM_CLAIM]->(:Claim) for the claims the graph holds, the latest file's list wins,
    the Browser query walks its claim tree and chunks, and deleting the runs leaves the graph as it was
    before them, claim layer included."""
    import json

    from mhgraph import cypher
    from mhgraph.benchmark import load_questions
    from mhgraph.claims.build import build_claims
    from mhgraph.eval import traces
    from mhgraph.eval.runner import EvalOptions, evaluate
    from mhgraph.ingest.pipeline import ingest_corpus
    from tests.conftest import SAMPLE, run_cli

    db = settings.neo4j_database

    def rows(text: str, **params) -> list[dict]:
        return [r.data() for r in empty_graph.execute_query(text, params, database_=db).records]

    ingest_corpus(SAMPLE / "corpus.json", settings, empty_graph, embedder=embedder, progress=False)
    build_claims(empty_graph, db, "sample", extractor, embedder, progress=False)
    layer = rows("MATCH (c:Chunk)-[:HAS_CLAIM]->(k:Claim) RETURN k.id AS id, c.id AS chunk ORDER BY k.document_id, id")
    assert len(layer) >= 8
    ids = [r["id"] for r in layer]
    chunk_of = {r["id"]: r["chunk"] for r in layer}
    before = rows(GRAPH_COUNTS)

    benchmark = json.loads((SAMPLE / "questions.json").read_text())
    own = {"hops": 2, "difficulty": {"mhts": 0.5}, "construction": "bridge", "made_by": {"generator": "test"}}
    records = [{**benchmark[0], **own, "claims": [ids[0], ids[-1], "no-such-claim"]},
               {**benchmark[1], **own, "claims": [ids[1]]},
               {**benchmark[2], **own, "claims": [ids[2], ids[3]]},
               benchmark[3]]   # a benchmark record: no claims
    path = tmp_path / "generated.json"
    path.write_text(json.dumps(records))
    questions = load_questions(path)
    assert [len(q.claims) for q in questions] == [3, 1, 2, 0]

    def from_claim() -> set[tuple[str, str]]:
        return {(r["q"], r["k"]) for r in rows("MATCH (q:Question)-[f:FROM_CLAIM]->(k:Claim) "
                                                 "WHERE properties(f) = {} RETURN q.id AS q, k.id AS k")}

    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    runs_dir = tmp_path / "runs"
    out = run_cli(settings, "eval", "-m", "bm25", "--questions", str(path), "-k", "4", "--run-id", "gen-bm25",
                  "--no-progress", "--runs-dir", str(runs_dir), env=env)
    assert out.returncode == 0, out.stderr
    expected = {(q.id, k) for q in questions for k in q.claims if k != "no-such-claim"}
    assert from_claim() == expected and len(expected) == 5   # the id the graph does not hold: skipped

    # the Browser query: the question, its claims with Target and Topic, their chunks and documents, its gold
    first = json.loads((runs_dir / "gen-bm25" / "results.json").read_text())[0]
    assert first["id"] == questions[0].id and first["gold"]
    walk = cypher.load("browser/question_claims")
    tree = empty_graph.execute_query(walk, question=first["id"], database_=db).records[0]
    assert tree["q"]["id"] == first["id"]
    assert {p.end_node["id"] for p in tree["claims"]} == {ids[0], ids[-1]}
    assert len(tree["targets"]) == len(tree["topics"]) == 2
    assert {p.nodes[1]["id"] for p in tree["held"]} == {chunk_of[ids[0]], chunk_of[ids[-1]]}
    assert all(p.end_node["title"] for p in tree["held"])          # the chunk's Document
    assert sorted(p.nodes[1]["id"] for p in tree["gold"]) == sorted(first["gold"])
    plain = empty_graph.execute_query(walk, question=questions[3].id, database_=db).records[0]
    assert plain["claims"] == plain["held"] == [] and plain["q"]["id"] == questions[3].id

    # a second run of the same questions, from a file whose first question lists other claims now
    records[0]["claims"] = [ids[4]]
    path.write_text(json.dumps(records))
    evaluate(settings, empty_graph, EvalOptions(method="vector", questions_path=path, top_k=4, progress=False,
                                                runs_dir=runs_dir, run_id="gen-vector"), embedder=embedder)
    expected = {(q.id, k) for q in load_questions(path) for k in q.claims}
    assert from_claim() == expected and (questions[0].id, ids[0]) not in expected

    # deleting one run keeps what describes the questions the other still asks; deleting the last
    # leaves the graph as before the runs: no Question, no FROM_CLAIM or HAS_GOLD, every Claim
    gold = rows("MATCH ()-[g:HAS_GOLD]->() RETURN count(g) AS n")[0]["n"]
    deleted = run_cli(settings, "runs", "delete", "gen-bm25", env=env)
    assert deleted.returncode == 0 and "deleted run gen-bm25" in deleted.stdout
    assert from_claim() == expected and rows("MATCH ()-[g:HAS_GOLD]->() RETURN count(g) AS n")[0]["n"] == gold > 0
    assert traces.delete_run(empty_graph, db, "gen-vector")
    assert rows(GRAPH_COUNTS) == before
