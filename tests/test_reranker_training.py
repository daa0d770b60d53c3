"""k-fold splits by question, the loop that trains one model per fold, and `mhgraph reranker train`
end to end on the bundled corpus: every question is scored by the fold model that never saw it."""

from __future__ import annotations

import json

import pytest

from mhgraph.errors import MhgraphError
from mhgraph.benchmark import load_questions
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.rerank.models import KFoldReranker, load_reranker
from mhgraph.training.reranker import Example, examples, taught
from mhgraph.training.folds import FINAL_MODEL, KFold, fold_of
from mhgraph.training.kfold import train_fold_models
from mhgraph.training.precision import fast_bf16
from tests.conftest import SAMPLE, eval_run_dir, run_cli, wipe


def test_folds_follow_the_question_text_not_the_file() -> None:
    questions = [f"question number {i}?" for i in range(300)]
    kfold = KFold(5, seed=3)
    folds = [kfold.fold(q) for q in questions]
    assert set(folds) == set(range(5)) and all(40 < folds.count(i) < 80 for i in range(5))
    # the same question keeps its fold whatever else the list holds (a held-back split changes nothing)
    assert [kfold.fold(q) for q in questions[::7]] == folds[::7]
    assert fold_of("  question number 4? ", 5, 3) == folds[4]                 # whitespace-normalised
    split = kfold.split(questions, lambda q: q)
    for i, (train, held_out) in enumerate(split):
        assert not set(train) & set(held_out) and len(train) + len(held_out) == 300
        assert all(kfold.fold(q) == i for q in held_out)
    assert sorted(q for _, held in split for q in held) == sorted(questions)   # each held out exactly once
    with pytest.raises(MhgraphError, match="at least 2 folds"):
        KFold(1)


@pytest.mark.parametrize(("where", "content", "error"), [
    ("folder", "{not json", r"folds.json: not a k-fold description \(Expecting property name"),
    ("folder", "[1, 2]", r"folds.json: not a k-fold description \(not a JSON object\)"),
    ("beside", "[1, 2]", r"folds.json: not a training record \(a JSON object\)"),
    ("beside", json.dumps({"final": {"path": "all", "question_keys": 5}}),
     r"folds.json: 'final.question_keys' is not a list of question keys"),
])
def test_export_reads_a_bad_training_record_as_one_line(tmp_path, where: str, content: str, error: str) -> None:
    import re
    import subprocess
    import sys

    source = tmp_path / "trained" / "all"
    source.mkdir(parents=True)
    (source if where == "folder" else source.parent).joinpath("folds.json").write_text(content)
    result = subprocess.run([sys.executable, "-m", "mhgraph.cli", "reranker", "export", str(source),
                             "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert re.match(r"error: \S+" + error, result.stderr), result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "code", "error"), [
    (("reranker", "train", "--no-final", "--only-final"), 1, "error: --no-final and --only-final exclude each other"),
    (("reranker", "train", "--learning-rate", "0"), 2, "Invalid value for '--learning-rate'"),
    (("treehop", "train", "--learning-rate", "-1"), 2, "Invalid value for '--learning-rate'"),
    (("treehop", "train", "--terms", "q,bogus"), 1, "error: TreeHop: terms must be a non-empty subset of q, c, gate"),
])
def test_training_options_are_refused_before_any_work(tmp_path, args: tuple[str, ...], code: int, error: str) -> None:
    import subprocess
    import sys

    # an address where nothing listens: an option refused after connecting would say so instead
    result = subprocess.run([sys.executable, "-m", "mhgraph.cli", "--uri", "bolt://127.0.0.1:9", "--password", "x",
                             *args, "--out", str(tmp_path / "out"), "--sample"], capture_output=True, text=True,
                            timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == code and error in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
    if code == 1:
        assert result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("trainer", ["reranker", "treehop"])
def test_an_out_that_is_a_file_is_refused_before_any_work(tmp_path, trainer: str) -> None:
    import subprocess
    import sys

    taken = tmp_path / "questions.json"
    taken.write_text("[]\n")
    result = subprocess.run([sys.executable, "-m", "mhgraph.cli", "--uri", "bolt://127.0.0.1:9", "--password", "x",
                             trainer, "train", "--out", str(taken), "--sample"], capture_output=True, text=True,
                            timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 1 and result.stderr == (
        f"error: {taken}: a file, not a folder (--out names the folder the models are written to)\n")
    assert taken.read_text() == "[]\n"


def test_a_kfold_folder_named_without_its_prefix_says_how_to_name_it(tmp_path) -> None:
    folder = tmp_path / "rr-mine"
    folder.mkdir()
    (folder / "folds.json").write_text('{"k": 2, "seed": 0, "models": ["fold-0", "fold-1"]}')
    with pytest.raises(MhgraphError, match=rf"^reranker '{folder}' is a k-fold folder \(it holds folds.json\): "
                                           rf"name it 'kfold:{folder}', which"):
        load_reranker(str(folder))


def test_the_eval_command_a_trainer_prints_names_its_questions_and_corpus() -> None:
    from pathlib import Path

    from mhgraph.benchmark import default_questions_path
    from mhgraph.cli.root import question_flags

    assert question_flags(False, "mine", Path("my questions.json")) == "--corpus mine --questions 'my questions.json'"
    assert question_flags(False, "multihop-rag", default_questions_path()) == "--corpus multihop-rag"
    assert question_flags(True, "sample", Path("whatever.json")) == "--sample"
    # --sample's questions trained on another corpus: that corpus, and the questions by their path
    assert question_flags(True, "other", Path("q.json")) == "--corpus other --questions q.json"


def test_the_fold_loop_trains_each_model_on_what_it_may_see(tmp_path) -> None:
    from types import SimpleNamespace

    questions = [SimpleNamespace(id=f"q{i}", query=f"question number {i}?") for i in range(30)]
    kfold = KFold(3, seed=1)
    seen = []

    def model(fold):
        seen.append(fold)
        return {"trained_on": len(fold.training)}

    trained = train_fold_models(questions, kfold, tmp_path / "m", model, model)
    assert trained.models == ["fold-0", "fold-1", "fold-2"] and [f.name for f in seen] == trained.models + [FINAL_MODEL]
    for fold, row in zip(seen, trained.folds):
        assert fold.directory == tmp_path / "m" / fold.name and row == {"fold": fold.index, "trained_on": len(fold.training)}
        assert all(kfold.fold(q.query) == fold.index for q in fold.held_out)
        assert not {q.id for q in fold.training} & {q.id for q in fold.held_out}
    final = seen[-1]
    assert final.index is None and final.training == questions and not final.held_out and trained.final == {"trained_on": 30}
    only_final = train_fold_models(questions, kfold, tmp_path / "f", None, model)   # the model for users alone
    assert only_final.models == [] and only_final.folds == [] and only_final.final == {"trained_on": 30}
    assert train_fold_models(questions, kfold, tmp_path / "n", model, None).final is None
    # more folds than questions: folds that hold out nothing are refused before any model is trained
    seen.clear()
    with pytest.raises(MhgraphError, match=r"^\d+ of 50 folds hold out no question \(30 questions\): use fewer --folds$"):
        train_fold_models(questions, KFold(50), tmp_path / "e", model, model)
    assert seen == [] and not (tmp_path / "e").exists()
    assert train_fold_models(questions, KFold(50), tmp_path / "u", None, model).final == {"trained_on": 30}   # final only


def test_examples_are_gold_positives_and_near_miss_negatives() -> None:
    class Q:
        def __init__(self, id, query):
            self.id, self.query = id, query

    texts = {c: f"text {c}" for c in "abcdefg"}
    pairs = examples([Q("q1", "one?"), Q("q2", "two?")], {"q1": ["a", "e"], "q2": []},
                     {"q1": ["b", "a", "c", "d"], "q2": ["f"]}, texts, negatives=2)
    assert pairs == [Example("one?", "text a", 1.0), Example("one?", "text e", 1.0),
                     Example("one?", "text b", 0.0), Example("one?", "text c", 0.0)]   # q2: no gold, no pairs


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    return driver


def test_train_kfold_on_the_sample_and_score_with_the_unseen_model(sample_graph, settings, tmp_path) -> None:
    out = tmp_path / "reranker"
    done = run_cli(settings, "reranker", "train", "--sample", "--folds", "2", "--negatives", "1", "--max-length", "64",
                   "--batch-size", "8", "--epochs", "1", "--no-final", "--out", str(out))
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "folds.json").read_text())
    assert record["k"] == 2 and record["models"] == ["fold-0", "fold-1"] and "final" not in record
    assert record["options"]["bf16"] == fast_bf16()   # bfloat16 where this machine runs it fast
    # the corpus and its revision then: a later change of the corpus is warned about
    from mhgraph.graph.documents import CORPUS_FACTS, corpus_facts

    assert {k: record[k] for k in CORPUS_FACTS} == corpus_facts(sample_graph, settings.neo4j_database, "sample")
    assert record["corpus"] == "sample" and record["corpus_revision"] > 0 and record["corpus_created"]
    questions = load_questions(SAMPLE / "questions.json")
    kfold = KFold(2, record["seed"])
    for fold in record["folds"]:   # trained on the other fold's questions only
        held_out = sum(kfold.fold(q.query) == fold["fold"] for q in questions)
        assert fold["held_out"] == held_out and fold["training_questions"] == len(questions) - held_out
        assert fold["pairs"] > fold["positives"] > 0
    reranker = load_reranker(f"kfold:{out}")
    assert isinstance(reranker, KFoldReranker) and "in-domain trained, 2-fold" in reranker.name
    query = questions[0].query
    scores = reranker.score(query, ["Veltrix recalled robots.", "The striker scored twice."])
    assert len(scores) == 2 and list(reranker._models) == [kfold.fold(query)]   # only its fold's model loaded
    own = load_reranker(str(out / f"fold-{kfold.fold(query)}"))
    assert own.score(query, ["Veltrix recalled robots.", "The striker scored twice."]) == pytest.approx(scores)
    evaluated = run_cli(settings, "eval", "--sample", "--method", "metarag", "--reranker", f"kfold:{out}", "-k", "3",
                        "--limit", "4", "--runs-dir", str(tmp_path / "runs"), "--no-trace", "--no-progress")
    assert evaluated.returncode == 0, evaluated.stderr
    assert "in-domain trained, 2-fold" in evaluated.stdout
    with pytest.raises(MhgraphError, match="folds.json: not found"):
        load_reranker(f"kfold:{tmp_path}")
    # the k-fold folder exported to ONNX: each fold model under its name, each recording the
    # questions it was trained on (the other fold's), scored by fold as the torch models were
    onnx = tmp_path / "reranker-onnx"
    exported = run_cli(settings, "reranker", "export", str(out), "--out", str(onnx), "--no-quantize",
                       "--rerank-weight", "0.4")
    assert exported.returncode == 0, exported.stderr
    assert json.loads((onnx / "folds.json").read_text())["models"] == ["fold-0", "fold-1"]
    for fold in (0, 1):
        described = json.loads((onnx / f"fold-{fold}" / "reranker.json").read_text())
        assert described["fold"] == fold and len(described["trained_on"]) == sum(
            kfold.fold(q.query) != fold for q in questions)
    from_onnx = load_reranker(f"kfold:{onnx}")
    onnx_scores = from_onnx.score(query, ["Veltrix recalled robots.", "The striker scored twice."])
    exact = load_reranker(f"kfold:{out}", precision="float32").score(query, ["Veltrix recalled robots.",
                                                                    "The striker scored twice."])
    assert onnx_scores == pytest.approx(exact, abs=1e-5)   # float32 both (the torch path may score in bf16)
    # the torch fold models in int8 (for CPUs without bf16): its fold's model, quantized; the
    # ONNX folds keep the precision they were exported at
    int8 = load_reranker(f"kfold:{out}", precision="int8")
    assert "2-fold, int8)" in int8.name
    int8_scores = int8.score(query, ["Veltrix recalled robots.", "The striker scored twice."])
    assert int8._models[kfold.fold(query)].precision == "int8" and int8_scores == pytest.approx(exact, abs=0.05)
    with pytest.raises(MhgraphError, match="is an ONNX export, which keeps the precision"):
        load_reranker(f"kfold:{onnx}", precision="int8")
    assert type(from_onnx._models[kfold.fold(query)]).__name__ == "OnnxCrossEncoderReranker"
    assert from_onnx.rerank_weight == 0.4 and reranker.rerank_weight == 1.0   # the export's weight; none recorded
    # as a compose stage: each question reranked by its fold's model, and the run says in-domain
    composed = run_cli(settings, "eval", "--sample", "--method", "compose", "--stages",
                       f"candidates=vector rerank=kfold:{onnx}", "--rerank-tokens", "32", "-k", "3", "--limit", "4",
                       "--runs-dir", str(tmp_path / "runs"), "--no-trace", "--no-progress")
    assert composed.returncode == 0, composed.stderr
    params = json.loads((eval_run_dir(composed.stdout) / "report.json").read_text())["params"]
    assert params["reranker_training"] == {"corpus": record["corpus"], "in_domain_trained": True}
    assert "2-fold, 32-token pairs" in params["reranker"]
    assert params["rerank_weight"] == 0.4   # no weight given: the one the export recorded
    # distilled from it: each fold's model starts from the teacher's of its fold, cut to one layer,
    # and learns the teacher's logits (the teacher has no final model: --no-final, else one line)
    small = tmp_path / "distilled"
    distil = ["reranker", "train", "--sample", "--folds", "2", "--negatives", "1", "--max-length", "64",
              "--batch-size", "8", "--teacher", str(out), "--layers", "1", "--out", str(small)]
    refused = run_cli(settings, *distil)
    assert refused.returncode != 0 and f"teacher {out / 'all'}: no torch cross-encoder" in refused.stderr
    assert "--no-final" in refused.stderr and not small.exists()
    done = run_cli(settings, *distil, "--no-final")
    assert done.returncode == 0, done.stderr
    distilled = json.loads((small / "folds.json").read_text())
    assert distilled["options"]["teacher"] == str(out) and distilled["options"]["layers"] == 1
    for fold in (0, 1):
        assert json.loads((small / f"fold-{fold}" / "config.json").read_text())["num_hidden_layers"] == 1
    assert "in-domain trained, 2-fold" in load_reranker(f"kfold:{small}").name
    pairs = [Example(query, "Veltrix recalled robots.", 1.0), Example(query, "The striker scored twice.", 0.0)]
    labelled = taught(pairs, out / "fold-0", 64)
    assert [e.label for e in labelled] == pytest.approx(load_reranker(str(out / "fold-0"), precision="float32",
                                                                      max_length=64).score(query, [p.passage for p in pairs]))
    other = run_cli(settings, *distil, "--no-final", "--folds", "3")
    assert other.returncode != 0 and "2 folds, seed 0; the model trained here has 3" in other.stderr
    (out / "folds.json").write_text(json.dumps({**record, "questions_file": str(tmp_path / "gone.json")}))
    refused = run_cli(settings, "reranker", "export", str(out), "--out", str(tmp_path / "again"))
    assert refused.returncode != 0 and "give them with --questions" in refused.stderr


def test_layers_keep_the_backbones_first_layers(sample_graph, settings, tmp_path) -> None:
    """--layers 2: the model trained keeps the backbone's first 2 of its 6 layers, says so in its
    record and scores; more layers than the backbone has are refused in one line, before any search."""
    out = tmp_path / "small"
    done = run_cli(settings, "reranker", "train", "--sample", "--layers", "2", "--negatives", "1", "--max-length", "64",
                   "--batch-size", "8", "--only-final", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "folds.json").read_text())["options"]["layers"] == 2
    final = out / FINAL_MODEL
    assert json.loads((final / "config.json").read_text())["num_hidden_layers"] == 2
    # float32: near 0.5 a bfloat16 score rounds two close ones to the same value
    scores = load_reranker(str(final), precision="float32").score("Which company recalled robots?",
                                                        ["Veltrix recalled robots.", "Rain."])
    assert len(scores) == 2 and scores[0] != scores[1]
    refused = run_cli(settings, "reranker", "train", "--sample", "--layers", "7", "--only-final", "--out",
                      str(tmp_path / "too-deep"))
    assert refused.returncode == 1 and refused.stderr.strip() == (
        "error: --layers 7: backbone 'all-MiniLM-L6-v2' has 6 layers")
    assert "candidates:" not in refused.stdout and not (tmp_path / "too-deep").exists()
