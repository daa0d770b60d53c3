"""TreeHop: the UpdateGate, the branch tree with its two stop rules on a crafted graph in the real
server (one round trip per hop), checkpoints, and `mhgraph treehop train` k-fold on the bundled
corpus, evaluated with the model that never saw each question."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time
from pathlib import Path

import numpy as np
import pytest
import torch

from mhgraph.errors import MhgraphError
from mhgraph.benchmark import load_questions
from mhgraph.filters.model import MetadataFilter
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.retrieval import build_retriever
from mhgraph.retrieval.treehop import TreeHopOptions, TreeHopRetriever
from mhgraph.training.folds import KFold
from mhgraph.treehop.checkpoint import Checkpoint, TreeHopModels, load_checkpoint, save_checkpoint
from mhgraph.treehop.model import TreeHopConfig, TreeHopModel, UpdateGate
from mhgraph.filters.diagnostics import FilterExtraction
from mhgraph.treehop.diagnostics import TreeHopTree
from tests.conftest import SAMPLE, run_cli, wipe
from tests.test_metarag import FixedFilter

DIM = 384   # the sample's vector index (all-MiniLM-L6-v2)


def unit(**parts: float) -> np.ndarray:
    """A unit vector from named basis components, e.g. unit(e0=1, e1=0.3)."""
    v = np.zeros(DIM, dtype=np.float32)
    for name, x in parts.items():
        v[int(name[1:])] = x
    return v / np.linalg.norm(v)


def test_update_gate_shapes_and_gradient_flow() -> None:
    torch.manual_seed(0)
    model = TreeHopModel(TreeHopConfig(dimension=16, dropout=0.1))
    q, c = torch.nn.functional.normalize(torch.randn(5, 16), dim=-1), torch.nn.functional.normalize(torch.randn(5, 16), dim=-1)
    out = model(q, c)
    assert out.shape == (5, 16) and torch.allclose(out.norm(dim=-1), torch.ones(5))
    (out @ torch.randn(16)).sum().backward()
    named = dict(model.named_parameters())
    assert set(named) == {f"gate.{p}.{w}" for p in ("query", "key", "value") for w in ("weight", "bias")} | {"gate.out.weight"}
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in named.values())
    assert UpdateGate(7)(torch.randn(3, 7), torch.randn(3, 7)).shape == (3, 7)   # any dimension
    with pytest.raises(MhgraphError, match=r"must both be \(\.\.\., 16\)"):
        model(torch.randn(2, 8), torch.randn(2, 8))
    with pytest.raises(MhgraphError, match="terms must be"):
        TreeHopConfig(dimension=4, terms=("q", "x"))


def test_the_update_on_a_hand_made_case() -> None:
    q, c = torch.tensor([[1.0, 0.0, 0.0]]), torch.tensor([[0.6, 0.8, 0.0]])
    # without the gate: q - c, normalised
    arithmetic = TreeHopModel(TreeHopConfig(dimension=3, terms=("q", "c")))
    assert torch.allclose(arithmetic.next_queries(q, c), torch.tensor([[0.4, -0.8, 0.0]]) / np.sqrt(0.8))
    # a gate set by hand: Q and K zero, so the attention is uniform (1/3 per dimension); V = I, out = 3 I:
    # UpdateGate(q, c) = c, and q - c + c = q
    model = TreeHopModel(TreeHopConfig(dimension=3, dropout=0.0))
    with torch.no_grad():
        for layer in (model.gate.query, model.gate.key, model.gate.value):
            layer.weight.zero_()
            layer.bias.zero_()
        model.gate.value.weight.copy_(torch.eye(3))
        model.gate.out.weight.copy_(3 * torch.eye(3))
    assert torch.allclose(model.next_queries(q, c), q, atol=1e-6)
    # Q = I with a large scale picks the dimension where q and c agree most (the first: 0.6)
    with torch.no_grad():
        model.gate.query.weight.copy_(50 * torch.eye(3))
        model.gate.key.weight.copy_(torch.eye(3))
        model.gate.out.weight.copy_(torch.eye(3))
    with torch.no_grad():
        gate = model.gate(q, c)
    assert float(gate[0, 0]) == pytest.approx(0.6, abs=1e-3) and abs(float(gate[0, 1])) < 1e-3


class FixedEmbedder:
    """Question vectors set by the test: the crafted graph's geometry is what is under test."""
    model_name = "all-MiniLM-L6-v2"

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def embed_query(self, text: str) -> list[float]:
        return self.vectors[text].tolist()


# The crafted corpus: q = e0. A and B are its two nearest chunks (hop 1, top 2). Without the gate
# the next queries are q - A (mostly -e1) and q - B (mostly -e2): q - A finds D, then F; q - B
# finds E, then A again (already retrieved).
CRAFTED = {
    "A": unit(e0=1, e1=0.3), "B": unit(e0=1, e2=0.32), "D": unit(e1=-1, e4=0.1),
    "E": unit(e2=-1, e4=0.2), "F": unit(e1=-1, e5=0.35), "Z": unit(e9=1),
}


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    driver.execute_query(
        "MERGE (d:Document {id: 'crafted-doc'}) SET d.corpus = 'crafted', d.title = 'Crafted' "
        "WITH d UNWIND $chunks AS row "
        "CREATE (c:Chunk {id: row.id, corpus: 'crafted', text: row.id, embedding: row.embedding, index: 0})"
        "-[:FROM_DOCUMENT]->(d)",
        chunks=[{"id": k, "embedding": v.tolist()} for k, v in CRAFTED.items()], database_=settings.neo4j_database)
    driver.execute_query("CALL db.awaitIndexes(300)", database_=settings.neo4j_database)
    return driver


def crafted(graph, settings, **rules) -> TreeHopRetriever:
    arithmetic = TreeHopModel(TreeHopConfig(dimension=DIM, terms=("q", "c")))   # q - c: nothing to load
    models = TreeHopModels([Checkpoint(arithmetic, "all-MiniLM-L6-v2", Path("q-c"), {})], "q - c")
    return TreeHopRetriever(graph, FixedEmbedder({"q": unit(e0=1)}), models, settings.neo4j_database, corpus="crafted",
                            search_ratio=10, **rules)


@pytest.mark.parametrize("redundancy, layer, second_hop", [
    (True, True, [("D", "A"), ("E", "B")]),                      # both rules: the 2 best new branches
    (True, False, [("D", "A"), ("E", "B"), ("F", "A")]),         # A (again, from B) pruned
    (False, True, [("D", "A"), ("E", "B")]),                     # the 2 best, whatever they repeat
    (False, False, [("D", "A"), ("E", "B"), ("F", "A"), ("A", "B")]),
])
def test_stop_rules_on_a_crafted_graph(sample_graph, settings, redundancy, layer, second_hop) -> None:
    retriever = crafted(sample_graph, settings, hops=2, redundancy_pruning=redundancy, layer_top_k=layer)
    result = retriever.search("q", top_k=2)
    assert [(c.chunk_id, c.parent_id, c.rank) for c in result.hops[0].chunks] == [("A", None, 1), ("B", None, 2)]
    assert [(c.chunk_id, c.parent_id) for c in result.hops[1].chunks] == second_hop
    assert [c.rank for c in result.hops[1].chunks] == list(range(1, len(second_hop) + 1))
    assert list(result.diagnostic(TreeHopTree).branches) == [2, len(second_hop)]
    assert retriever.round_trips == 2                            # one Cypher query per hop, every branch in it
    assert result.accumulated_ids(2) == list(dict.fromkeys(["A", "B"] + [c for c, _ in second_hop]))


def test_branches_sets_how_many_new_branches_a_hop_keeps(sample_graph, settings) -> None:
    retriever = crafted(sample_graph, settings, hops=2, branches=1)
    result = retriever.search("q", top_k=2)
    # hop 2 keeps only the best new branch (D, from A) of the three
    assert [(c.chunk_id, c.parent_id) for c in result.hops[1].chunks] == [("D", "A")]
    assert list(result.diagnostic(TreeHopTree).branches) == [2, 1]
    assert retriever.params["branches"] == 1
    # without layer-wise top-k the count does not apply
    unlimited = crafted(sample_graph, settings, hops=2, branches=1, layer_top_k=False).search("q", top_k=2)
    assert len(unlimited.hops[1].chunks) == 3


DAY_1, DAY_2 = date(2023, 10, 1), date(2023, 10, 2)
# the crafted chunks' metadata: source S1 or S2, published on day 1 or day 2
META = {"A": ("S1", DAY_1), "B": ("S2", DAY_1), "D": ("S1", DAY_1), "E": ("S2", DAY_2), "F": ("S1", DAY_2),
        "Z": ("S2", DAY_2)}


@pytest.mark.parametrize("found", [
    MetadataFilter(sources=("S2",)),                         # sources only
    MetadataFilter(days=(DAY_2,)),                           # days only
    MetadataFilter(sources=("S2",), day_from=DAY_1),         # both (a range open at its end)
])
def test_the_filter_holds_at_every_hop(sample_graph, settings, found) -> None:
    sample_graph.execute_query(
        "UNWIND $rows AS row MATCH (c:Chunk {id: row.id, corpus: 'crafted'}) "
        "SET c.source = row.source, c.published_at = datetime(row.day)",
        rows=[{"id": k, "source": s, "day": d.isoformat()} for k, (s, d) in META.items()],
        database_=settings.neo4j_database)
    admitted = {k for k, (s, d) in META.items() if found.admits(s, datetime.combine(d, time(12), UTC))}
    retriever = crafted(sample_graph, settings, hops=3, extractor=FixedFilter(found))
    result = retriever.search("q", top_k=2)
    ids = [c.chunk_id for h in result.hops for c in h.chunks]
    assert ids and set(ids) <= admitted and len(result.hops) >= 2
    assert result.hops[1].chunks, "the branches find admitted chunks at hop 2"
    assert all(h.filters == found.to_json() for h in result.hops)
    assert result.diagnostic(FilterExtraction).fallback is False and retriever.params["filter_extractor"] == "fixed"
    assert retriever.round_trips == len(result.hops) and "filter" in result.phases
    # a question with no usable filter is searched unfiltered, and says so
    unfiltered = crafted(sample_graph, settings, hops=3, extractor=FixedFilter(MetadataFilter())).search("q", top_k=2)
    plain = crafted(sample_graph, settings, hops=3).search("q", top_k=2)
    assert unfiltered.diagnostic(FilterExtraction).fallback is True and unfiltered.hops[0].filters is None
    assert [[c.chunk_id for c in h.chunks] for h in unfiltered.hops] == [[c.chunk_id for c in h.chunks] for h in plain.hops]


def test_one_round_trip_per_hop_and_pruned_trees_end(sample_graph, settings) -> None:
    retriever = crafted(sample_graph, settings, hops=4)
    result = retriever.search("q", top_k=2)
    assert retriever.round_trips == len(result.hops) <= 4
    ids = [c.chunk_id for h in result.hops for c in h.chunks]
    assert len(ids) == len(set(ids))                             # with redundancy pruning nothing comes twice
    parents = {c.chunk_id: c.parent_id for h in result.hops for c in h.chunks}
    for hop in result.hops[1:]:                                  # every child hangs from the previous hop
        previous = {c.chunk_id for c in result.hops[hop.index - 2].chunks}
        assert all(c.parent_id in previous for c in hop.chunks)
    assert parents["A"] is None and parents["D"] == "A"


def test_checkpoint_round_trip_and_embedder_mismatch(tmp_path) -> None:
    torch.manual_seed(1)
    model = TreeHopModel(TreeHopConfig(dimension=8, dropout=0.2))
    save_checkpoint(model, tmp_path / "m", "all-MiniLM-L6-v2", training={"questions": 3})
    loaded = load_checkpoint(tmp_path / "m", "all-MiniLM-L6-v2")
    assert loaded.embedding_model == "all-MiniLM-L6-v2" and loaded.model.config == model.config
    assert loaded.facts["training"] == {"questions": 3} and loaded.facts["dimension"] == 8
    q, c = torch.randn(4, 8), torch.randn(4, 8)
    assert torch.allclose(loaded.model.next_queries(q, c), model.next_queries(q, c))
    with pytest.raises(MhgraphError, match=r"trained for embedding model 'all-MiniLM-L6-v2' \(8 dimensions\), "
                                           r"but the corpus is embedded with 'bge-small-en-v1.5'"):
        load_checkpoint(tmp_path / "m", "bge-small-en-v1.5")
    with pytest.raises(MhgraphError, match="config.json: not found"):
        load_checkpoint(tmp_path / "nothing")
    (tmp_path / "listed").mkdir()
    (tmp_path / "listed" / "config.json").write_text("[]")
    with pytest.raises(MhgraphError, match=r"config.json: not a TreeHop checkpoint config \(not a JSON object\)"):
        load_checkpoint(tmp_path / "listed")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(MhgraphError, match="cannot load the TreeHop weights"):
        load_checkpoint(tmp_path / "m")


def test_packaged_model_runs_on_the_sample(sample_graph, settings, embedder) -> None:
    # trained on MultiHop-RAG's questions: on another corpus it says so, in one line
    with pytest.warns(UserWarning, match=r"^TreeHop model \S+ \(trained on all 2045 questions of corpus 'multihop-rag'\) "
                                         r"learned from corpus 'multihop-rag', not 'sample': .+ "
                                         r"\(mhgraph treehop train --corpus sample --questions FILE, then --treehop-model\)$"):
        retriever = build_retriever("treehop", sample_graph, settings, embedder=embedder, corpus="sample")
    result = retriever.search("Which company recalled its Atlas Home robots over battery fire risk?", top_k=3)
    assert len(result.hops) == 2 and retriever.params["in_domain_trained"] is False
    assert retriever.params["treehop_model"].endswith("(trained on all 2045 questions of corpus 'multihop-rag')")
    assert all(c.parent_id in {p.chunk_id for p in result.hops[0].chunks} for c in result.hops[1].chunks)
    assert set(result.phases) == {"embed", "search", "update"} and result.seconds >= sum(result.phases.values()) * 0.99
    assert retriever.trained_models() == (retriever.models,)


def test_the_packaged_model_knows_the_questions_it_was_trained_on() -> None:
    """Its training questions are recorded as keys: an eval on them is labelled not held out, and on
    its training corpus it counts as in-domain trained."""
    from mhgraph.benchmark import default_questions_path, load_questions
    from mhgraph.treehop.checkpoint import PACKAGED, TreeHopModels

    models = TreeHopModels.load(PACKAGED, "all-MiniLM-L6-v2")
    assert len(models.trained_on) == 2045
    assert not models.saw("Which company recalled its Atlas Home robots over battery fire risk?")
    assert models.in_domain_for("multihop-rag") and not models.in_domain_for("sample") and not models.in_domain
    path = default_questions_path()
    if path.is_file():   # the benchmark beside the checkout (CI has it): its questions are the ones seen
        assert sum(models.saw(q.query) for q in load_questions(path)) == len(models.trained_on)


def test_train_kfold_on_the_sample_lowers_the_loss_and_scores_unseen_questions(sample_graph, settings, tmp_path) -> None:
    out = tmp_path / "treehop"
    done = run_cli(settings, "treehop", "train", "--sample", "--folds", "2", "--epochs", "30", "--patience", "30",
                   "--batch-size", "8", "--learning-rate", "1e-3", "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    # the command it prints runs on the questions it trained on
    assert done.stdout.rstrip().endswith(f"evaluate with: mhgraph eval --method treehop --treehop-model {out} --sample")
    record = json.loads((out / "folds.json").read_text())
    assert record["k"] == 2 and record["models"] == ["fold-0", "fold-1"] and record["final"]["path"] == "all"
    assert (out / "loss.png").stat().st_size > 1000
    from mhgraph.graph.documents import corpus_facts
    from mhgraph.treehop.checkpoint import TreeHopModels

    models = TreeHopModels.load(out, "all-MiniLM-L6-v2")
    assert models.corpus_facts == corpus_facts(sample_graph, settings.neo4j_database, "sample")
    assert models.corpus_facts["corpus"] == "sample" and models.corpus_facts["corpus_revision"] > 0
    questions = load_questions(SAMPLE / "questions.json")
    kfold = KFold(2, record["seed"])
    for fold in record["folds"]:   # no question is in its own fold's training set
        own = {q.id for q in questions if kfold.fold(q.query) == fold["fold"]}
        assert own and not own & set(fold["training_question_ids"])
        assert len(fold["training_question_ids"]) == len(questions) - len(own) == fold["training_questions"]
    final = load_checkpoint(out / "all", "all-MiniLM-L6-v2").facts["training"]
    assert final["train_loss"][-1] < final["train_loss"][0]   # training lowers the loss
    evaluated = run_cli(settings, "eval", "--sample", "--method", "treehop", "--treehop-model", str(out), "-k", "3",
                        "--runs-dir", str(tmp_path / "runs"), "--run-id", "treehop-sample", "--no-progress")
    assert evaluated.returncode == 0, evaluated.stderr
    assert "in-domain trained, 2-fold" in evaluated.stdout
    led_to, _, _ = sample_graph.execute_query(
        "MATCH (:Chunk)-[r:LED_TO {run: 'treehop-sample'}]->(:Chunk) RETURN count(r) AS n, min(r.hop) AS hop",
        database_=settings.neo4j_database)
    assert led_to[0]["n"] > 0 and led_to[0]["hop"] == 2       # the branch tree is in the traces
    models = TreeHopModels.load(out, "all-MiniLM-L6-v2")
    # in-domain on the corpus it was trained on, not on another
    assert models.in_domain_for("sample") and not models.in_domain_for("another-corpus")
    question = questions[0].query
    assert models.for_question(question) is models.checkpoints[kfold.fold(question)].model
    with pytest.raises(MhgraphError, match="trained for embedding model"):
        TreeHopModels.load(out, "bge-small-en-v1.5")
    # the corpus changes after training: using the model on it says so, in one line
    from dataclasses import replace

    articles = json.loads((SAMPLE / "corpus.json").read_text())
    articles[0]["body"] += " A correction was appended to this article after publication."
    changed = tmp_path / "sample-changed.json"
    changed.write_text(json.dumps(articles))
    trained_at = models.corpus_facts["corpus_revision"]
    try:
        assert ingest_corpus(changed, replace(settings, corpus="sample"), sample_graph,
                             progress=False).replaced == 1
        with pytest.warns(UserWarning, match=rf"^TreeHop model {out} \(in-domain trained, 2-fold\) was trained on "
                                             rf"corpus 'sample' at revision {trained_at}; 1 document was added, replaced"):
            build_retriever("treehop", sample_graph, replace(settings, corpus="sample"),
                            options=TreeHopOptions(model=str(out)))
    finally:   # the module's sample as it was
        ingest_corpus(SAMPLE / "corpus.json", replace(settings, corpus="sample"), sample_graph, progress=False)


def test_train_evidence_disjoint_from_the_cli_withholds_and_labels_it(sample_graph, settings, tmp_path) -> None:
    out = tmp_path / "treehop"
    done = run_cli(settings, "treehop", "train", "--sample", "--folds", "2", "--epochs", "2", "--batch-size", "8",
                   "--evidence-disjoint", "--no-final", "--out", str(out), "--no-progress")
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "folds.json").read_text())
    assert record["options"]["evidence_disjoint"] and record["options"]["pair_disjoint"]
    assert all(fold["withheld_examples"] > 0 for fold in record["folds"])
    assert "withheld: evidence of held-out questions" in done.stdout + done.stderr
    from mhgraph.treehop.checkpoint import TreeHopModels

    assert "evidence-disjoint" in TreeHopModels.load(out, "all-MiniLM-L6-v2").name


def _folds_on(golds, near_misses, monkeypatch):
    """Synthetic training data (question i's gold chunks golds[i], each example with these near misses) and the
    examples each fold model is given, recorded by a spy on train_model."""
    from types import SimpleNamespace

    import mhgraph.training.treehop as training

    questions = [SimpleNamespace(id=f"q{i}", query=f"question number {i} about things") for i in range(len(golds))]
    examples = [training.Example(f"q{i}", i, a, b, near_misses) for i, (x, y) in enumerate(golds)
                for a, b in ((x, y), (y, x))]
    rng = np.random.default_rng(0)
    chunks = max(max(near_misses), *(c for g in golds for c in g)) + 1
    data = training.TrainingData(rng.normal(size=(len(golds), 8)).astype(np.float32),
                                 rng.normal(size=(chunks, 8)).astype(np.float32), examples,
                                 {f"q{i}": frozenset(g) for i, g in enumerate(golds)})
    seen: dict[int, list] = {}
    real = training.train_model

    def spy(data_, train, dev, options, log, progress):
        seen[len(seen)] = list(train) + list(dev)
        return real(data_, train, dev, options, log, progress)

    monkeypatch.setattr(training, "train_model", spy)
    return questions, examples, data, seen


def test_pair_disjoint_folds_never_train_on_a_held_out_questions_hop(tmp_path, monkeypatch) -> None:
    import mhgraph.training.treehop as training

    # q0 and q5 (in the other fold) share the gold pair (0, 1); the others share single chunks at most
    golds = [(0, 1), (7, 8), (2, 3), (4, 5), (2, 6), (0, 1), (1, 9), (3, 4)]
    questions, _, data, seen = _folds_on(golds, (10, 11), monkeypatch)
    options = training.TrainingOptions(folds=2, epochs=2, batch_size=4, negatives=2, final=False, pair_disjoint=True)
    record = training.train_treehop(data, questions, options, tmp_path / "m", "all-MiniLM-L6-v2", log=lambda _: None,
                                    progress=False)
    kfold = KFold(2, 0)
    assert kfold.fold(questions[0].query) != kfold.fold(questions[5].query)   # the shared pair is split
    for fold, used in seen.items():
        held = [set(g) for q, g in zip(questions, golds) if kfold.fold(q.query) == fold]
        assert used and not any({e.chunk, e.target} <= g for e in used for g in held)
        assert all(kfold.fold(f"question number {e.question_id[1:]} about things") != fold for e in used)
    assert sum(f["withheld_examples"] for f in record["folds"]) == 4   # q0's and q5's two hops each
    assert "pair-disjoint" in TreeHopModels.load(tmp_path / "m", "all-MiniLM-L6-v2").name


def test_evidence_disjoint_folds_never_train_on_a_held_out_questions_gold_chunk(tmp_path, monkeypatch) -> None:
    import mhgraph.training.treehop as training

    # chunks shared across questions singly (2, 3, 4, 1) as well as a whole pair (0, 1): pair-disjoint folds
    # would still train on hops through a held-out question's gold chunks; evidence-disjoint ones must not
    golds = [(0, 1), (7, 8), (2, 3), (4, 5), (2, 6), (0, 1), (1, 9), (3, 4),
             (12, 13), (14, 15), (16, 17), (18, 19), (20, 21), (22, 23)]
    # near misses hold other questions' gold chunks too (2, 4, 12): a held-out one must not be trained on as a negative
    questions, examples, data, seen = _folds_on(golds, (10, 11, 2, 4, 12), monkeypatch)
    kfold = KFold(2, 0)
    folds = [kfold.fold(q.query) for q in questions]
    held = {f: {c for g, f2 in zip(golds, folds) if f2 == f for c in g} for f in (0, 1)}
    expected = {f: [e for e in examples if folds[int(e.question_id[1:])] != f
                    and e.chunk not in held[f] and e.target not in held[f]] for f in (0, 1)}
    assert all(expected.values())   # the fixture leaves each fold model something to learn from
    # and pair-disjoint folds would have kept some of what evidence-disjoint ones withhold
    assert any(folds[int(e.question_id[1:])] != f and {e.chunk, e.target} & held[f]
               and not any({e.chunk, e.target} <= set(g) for g, f2 in zip(golds, folds) if f2 == f)
               for f in (0, 1) for e in examples)
    options = training.TrainingOptions(folds=2, epochs=2, batch_size=4, negatives=2, final=False,
                                       pair_disjoint=True, evidence_disjoint=True)
    record = training.train_treehop(data, questions, options, tmp_path / "m", "all-MiniLM-L6-v2", log=lambda _: None,
                                    progress=False)
    for fold, used in seen.items():
        assert not any({e.chunk, e.target, *e.near_misses} & held[fold] for e in used)
        assert sorted((e.question_id, e.chunk, e.target) for e in used) == \
            sorted((e.question_id, e.chunk, e.target) for e in expected[fold])
        assert all(set(e.near_misses) == {10, 11, 2, 4, 12} - held[fold] for e in used)
        assert {2, 4, 12} - held[fold]   # some near misses that are not held out are kept
    trained_on = sum(len(v) for v in expected.values())
    assert sum(f["withheld_examples"] for f in record["folds"]) == len(examples) - trained_on
    assert "evidence-disjoint" in TreeHopModels.load(tmp_path / "m", "all-MiniLM-L6-v2").name
