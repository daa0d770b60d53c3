"""The sentence-window reranker: a passage scored by its best sentence, densely (windows of the
question's words against its sentences) and lexically (the question's rare words in one sentence)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from mhgraph.errors import MhgraphError
from mhgraph.rerank.base import standardise
from mhgraph.rerank.models import load_reranker
from mhgraph.rerank.sentence_store import SentenceStore, passage_key
from mhgraph.rerank.sentence_windows import (
    SentenceWindowReranker,
    best_sentence_overlap,
    question_windows,
)
from mhgraph.text import sentences

QUESTION = ("Which central bank raised its interest rate in July, according to the Financial Times, and which "
            "team won the chess olympiad in Chennai, as reported by the Guardian?")
ANSWER = "The Federal Reserve raised its interest rate to 5.5% in July."
FILLER = ["Pasta should be cooked in plenty of salted water.", "The museum reopened its west wing after repairs.",
          "Tickets for the autumn concert series went on sale on Monday."]


def test_question_windows_cover_every_word_in_overlapping_runs() -> None:
    words = [f"w{i}" for i in range(29)]
    windows = question_windows(" ".join(words), words=12, step=6)
    assert windows[0].split() == words[:12] and windows[1].split() == words[6:18]
    assert windows[-1].split() == words[-12:]            # the last reaches the question's end
    assert all(len(w.split()) == 12 for w in windows)
    assert {w for window in windows for w in window.split()} == set(words)
    assert question_windows("Who won the race?") == ["Who won the race?"]
    assert question_windows("   ") == []


def test_best_sentence_overlap_counts_rare_question_words_held_together() -> None:
    question = "Did the chess olympiad in Chennai end in July?"
    together = ["The chess olympiad in Chennai ended.", "Nothing else."]
    apart = ["Chess is old.", "Chennai is hot.", "The olympiad ended."]
    common = ["It ended in July.", "July was hot.", "In July it rained."]   # 'july' in every sentence here
    scores = best_sentence_overlap(question, [together, apart, common])
    n, df = 8, {"chess": 2, "olympiad": 2, "chennai": 2, "july": 3, "end": 0}
    idf = {w: math.log((n + 1) / (f + 0.5)) for w, f in df.items() if f}
    assert scores[0] == pytest.approx(idf["chess"] + idf["olympiad"] + idf["chennai"])
    assert scores[1] == pytest.approx(idf["chess"])      # one word a sentence: the best sentence's
    assert scores[2] == pytest.approx(idf["july"]) and scores[2] < scores[1]
    assert best_sentence_overlap("the of and", [["The cat sat."]]) == [0.0]


def test_a_sentence_keeps_its_dense_score_among_unrelated_ones_where_the_whole_passage_loses_it() -> None:
    """The point of scoring by sentence: an answering sentence scores as high alone as amid filler,
    while the passage's own vector (bi-encoder) is diluted by the filler."""
    reranker = load_reranker("sentences:all-MiniLM-L6-v2")
    assert isinstance(reranker, SentenceWindowReranker) and reranker.name == "sentences:all-MiniLM-L6-v2"
    whole = load_reranker("bi-encoder:all-MiniLM-L6-v2")
    buried = " ".join([FILLER[0], ANSWER, *FILLER[1:]])
    alone, amid, unrelated = reranker.dense(QUESTION, [ANSWER, buried, " ".join(FILLER)])
    assert amid == pytest.approx(alone, abs=1e-5) and amid > unrelated + 0.2
    whole_alone, whole_amid = whole.score(QUESTION, [ANSWER, buried])
    assert whole_amid < whole_alone - 0.05
    # the best window beats the whole question on the sentence that answers one of its parts
    assert alone > whole_alone


def test_the_passage_holding_the_answer_ranks_first_whatever_the_order() -> None:
    reranker = SentenceWindowReranker("all-MiniLM-L6-v2")
    buried = " ".join([FILLER[0], ANSWER, *FILLER[1:]])
    spread = "Interest in chess grew. A bank opened in July. Rates were in the news."
    passages = [FILLER[0], spread, buried, " ".join(FILLER[1:])]
    scores = reranker.score(QUESTION, passages)
    assert max(range(4), key=scores.__getitem__) == 2
    # the kept words give what reading the sentences afresh gives: dense and lexical, standardised, added
    lexical = best_sentence_overlap(QUESTION, [sentences(p) for p in passages])
    assert scores == pytest.approx([d + w for d, w in zip(standardise(reranker.dense(QUESTION, passages)),
                                                          standardise(lexical))])
    assert reranker.score(QUESTION, passages[::-1]) == pytest.approx(scores[::-1])
    assert reranker.score(QUESTION, []) == []


def test_a_passage_without_text_scores_lowest_and_a_repeated_one_counts_once(monkeypatch) -> None:
    import mhgraph.rerank.sentence_windows as module

    reranker = SentenceWindowReranker("all-MiniLM-L6-v2")
    assert reranker.dense(QUESTION, ["", "  ", ANSWER])[:2] == [-1.0, -1.0]
    scores = reranker.score(QUESTION, [ANSWER, "", FILLER[0]])
    assert scores[1] == min(scores) and scores[0] == max(scores)
    # a passage given twice counts once in the word frequencies, and both copies score alike
    counted: list[int] = []
    real = module._best_overlap
    monkeypatch.setattr(module, "_best_overlap",
                        lambda question, parts: counted.append(len(parts)) or real(question, parts))
    twice = reranker.score(QUESTION, [ANSWER, FILLER[0], FILLER[1], ANSWER])
    assert counted == [3] and twice[0] == pytest.approx(twice[3]) and twice[0] == max(twice)


def test_sentences_are_embedded_once_and_kept_up_to_the_bound(monkeypatch) -> None:
    reranker = SentenceWindowReranker("all-MiniLM-L6-v2", keep=3)
    embedded: list[str] = []
    real = reranker.embedder.embed_documents
    monkeypatch.setattr(reranker.embedder, "embed_documents", lambda texts: embedded.extend(texts) or real(texts))
    two = " ".join(FILLER[:2])                                   # two sentences

    def sentences_embedded() -> list[str]:    # the question's windows may pass through embed_documents too
        return [t for t in embedded if t in (ANSWER, *FILLER)]

    first = reranker.dense(QUESTION, [ANSWER, two])
    assert sentences_embedded() == [ANSWER, *FILLER[:2]]
    assert reranker.dense(QUESTION, [two, ANSWER]) == first[::-1]
    assert sentences_embedded() == [ANSWER, *FILLER[:2]]        # nothing embedded again
    # ANSWER was scored last, so the new passage pushes out the two-sentence one (3 sentences at most)
    reranker.dense(QUESTION, [FILLER[2]])
    assert list(reranker._kept) == [ANSWER, FILLER[2]] and reranker._kept.size == 2
    # more sentences in one call than the bound: every passage is still scored
    assert len(reranker.dense(QUESTION, [two, " ".join(FILLER), ANSWER])) == 3
    assert reranker._kept.size <= 3


def test_its_own_fusion_weight_applies_unless_one_is_given() -> None:
    from mhgraph.rerank.base import fusion_weight

    reranker = load_reranker("sentences:all-MiniLM-L6-v2")
    assert fusion_weight(reranker, None) == 0.7 and fusion_weight(reranker, 1.0) == 1.0


def test_the_sentence_store_keeps_a_passages_sentences_and_vectors_by_its_text(tmp_path) -> None:
    store = SentenceStore.for_model(tmp_path, "org/model:v1")
    vectors = np.arange(6, dtype=np.float32).reshape(2, 3)
    store.put({"A. B.": (["A.", "B."], vectors), "": ([], np.zeros((0, 3), dtype=np.float32))})
    again = SentenceStore.for_model(tmp_path, "org/model:v1")             # another process, the same file
    found = again.get(["A. B.", "", "never stored"])
    assert set(found) == {"A. B.", ""} and len(again) == 2
    assert again.held(["A. B.", "", "never stored"]) == {"A. B.", ""}
    assert found["A. B."][0] == ["A.", "B."] and np.array_equal(found["A. B."][1], vectors)
    assert found[""][0] == [] and found[""][1].shape[0] == 0
    # keep_only deletes every other passage, and the file gives the space back
    store.put({f"Passage {i}.": ([f"Passage {i}."], np.ones((1, 3), dtype=np.float32)) for i in range(2000)})
    def on_disk() -> int:   # the file and its write-ahead log
        return sum(p.stat().st_size for p in tmp_path.glob(f"{store.path.name}*"))

    size = on_disk()
    assert store.keep_only({passage_key("A. B.")}) == 2001
    assert again.held(["A. B.", "", "Passage 0."]) == {"A. B."} and len(store) == 1
    assert on_disk() < size / 4
    # names a file cannot hold do not make two models share one
    assert SentenceStore.for_model(tmp_path, "org/model_v1").path != store.path
    with pytest.raises(MhgraphError, match=re.escape(f"{store.path}: holds the sentences of model 'org/model:v1'")):
        SentenceStore(store.path, "another-model")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(MhgraphError, match=rf"^{re.escape(str(tmp_path / 'a-file'))}/\S+: cannot open the sentence "
                                           r"store: [^\n]+$"):
        SentenceStore.for_model(tmp_path / "a-file", "org/model:v1")


def test_a_second_reranker_reads_the_sentences_the_first_one_stored(tmp_path, monkeypatch) -> None:
    """Given a cache folder, a passage is embedded once, not once a process; prepare embeds only
    what is not stored yet."""
    passages = [ANSWER, " ".join(FILLER), ""]
    first = SentenceWindowReranker("all-MiniLM-L6-v2", tmp_path)
    scores = first.score(QUESTION, passages)
    assert first.store is not None and first.store.path.parent == tmp_path / "sentences" and len(first.store) == 3
    second = SentenceWindowReranker("all-MiniLM-L6-v2", tmp_path)
    embedded: list[str] = []
    real = second.embedder.embed_documents
    monkeypatch.setattr(second.embedder, "embed_documents", lambda texts: embedded.extend(texts) or real(texts))
    assert second.score(QUESTION, passages) == pytest.approx(scores, abs=1e-5)
    assert not set(embedded) & {ANSWER, *FILLER}                        # read from the store
    assert second.prepare([ANSWER, FILLER[0], FILLER[0]]) == 1 and len(second.store) == 4
    assert embedded[-1:] == [FILLER[0]]
    with pytest.raises(MhgraphError, match="has no sentence store to prepare: no cache folder was given"):
        SentenceWindowReranker("all-MiniLM-L6-v2").prepare([ANSWER])


def test_a_store_that_cannot_be_opened_or_read_leaves_the_reranker_working_in_memory(tmp_path) -> None:
    (tmp_path / "sentences").write_text("")          # a file where the stores' folder would be
    with pytest.warns(UserWarning, match="cannot open the sentence store.*in memory only"):
        blocked = SentenceWindowReranker("all-MiniLM-L6-v2", tmp_path)
    assert blocked.store is None
    scores = blocked.score(QUESTION, [ANSWER, FILLER[0]])
    assert scores[0] > scores[1]
    with pytest.raises(MhgraphError, match="has no sentence store to prepare: .*cannot open the sentence store"):
        blocked.prepare([ANSWER])
    # a store that fails while scoring is dropped, the question still answered
    reranker = SentenceWindowReranker("all-MiniLM-L6-v2", tmp_path / "cache")
    reranker.store.close()
    with pytest.warns(UserWarning, match=r"cannot read the sentence store.*in memory only"):
        assert reranker.score(QUESTION, [ANSWER, FILLER[0]]) == pytest.approx(scores, abs=1e-5)
    assert reranker.store is None


def test_reranker_prepare_stores_every_chunks_sentences_once(empty_graph, settings, tmp_path) -> None:
    from pathlib import Path

    from tests.conftest import run_cli

    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    assert run_cli(settings, "ingest", "--no-progress", env=env).returncode == 0      # the bundled sample
    texts = [r["text"] for r in empty_graph.execute_query("MATCH (c:Chunk) RETURN c.text AS text",
                                                          database_=settings.neo4j_database).records]
    prepare = ("reranker", "prepare", "sentences:all-MiniLM-L6-v2", "--batch-size", "7", "--no-progress")
    result = run_cli(settings, *prepare, env=env)
    assert result.returncode == 0, result.stderr
    assert f": {len(texts)} chunks read, {len(set(texts))} texts prepared now" in result.stdout
    path = Path(re.search(r"store +(\S+)", result.stdout).group(1))
    assert path.parent == tmp_path / "cache" / "sentences"
    store = SentenceStore(path, "all-MiniLM-L6-v2")
    assert set(store.get(texts)) == set(texts)
    assert store.get([texts[0]])[texts[0]][0] == sentences(texts[0])
    # a second run finds them all stored
    again = run_cli(settings, *prepare, env=env)
    assert again.returncode == 0 and f": {len(texts)} chunks read, 0 texts prepared now" in again.stdout
    # of a combination, the part that keeps something (the other is not loaded: its folder is missing)
    combined = run_cli(settings, "reranker", "prepare", "kfold:no-such-folder+sentences:all-MiniLM-L6-v2",
                       "--no-progress", env=env)
    assert combined.returncode == 0, combined.stderr
    assert f"reranker sentences:all-MiniLM-L6-v2, corpus 'sample': {len(texts)} chunks read, 0 texts" in combined.stdout
    refused = run_cli(settings, "reranker", "prepare", "bi-encoder:all-MiniLM-L6-v2", env=env)
    assert refused.returncode != 0 and "there is nothing to prepare" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    # --prune: a stored passage no chunk holds any more (a document edited since) is deleted; the
    # chunks' are kept, another corpus's too
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"title": "Harbour lights", "author": "A. Writer", "source": "Other Wire",
                                  "published_at": "2023-10-01T00:00:00+00:00", "category": "news",
                                  "url": "https://other.example/harbour-lights",
                                  "body": "The harbour lights were switched on again. Nobody knew who paid."}]))
    assert run_cli(settings, "ingest", str(other), "--corpus", "other", "--no-progress", env=env).returncode == 0
    others = [r["text"] for r in empty_graph.execute_query("MATCH (c:Chunk {corpus: 'other'}) RETURN c.text AS text",
                                                           database_=settings.neo4j_database).records]
    stale = "A chunk's text before its document was edited. It had two sentences."
    store.put({t: (sentences(t), np.ones((len(sentences(t)), 384), dtype=np.float32)) for t in [stale, *others]})
    assert store.held([stale, *others]) == {stale, *others} and not set(others) & set(texts)
    pruned = run_cli(settings, *prepare, "--corpus", "sample", "--prune", env=env)
    assert pruned.returncode == 0, pruned.stderr
    assert "pruned  1 stored passages no chunk of the graph holds" in pruned.stdout
    assert store.held([stale]) == set() and store.held(texts + others) == set(texts + others)
