"""Rerankers combined as one (`A+B`, mhgraph/rerank/combined.py): each one's scores standardised
over the passages, then averaged; the pair token limit reaches the cross-encoders among them, and
what a part saw in training is the combination's."""

from __future__ import annotations

import pytest

from mhgraph.benchmark import default_questions_path, load_questions
from mhgraph.compose.stages import parse_stages
from mhgraph.errors import MhgraphError
from mhgraph.rerank.base import fusion_weight, standardise
from mhgraph.rerank.combined import CombinedReranker
from mhgraph.rerank.models import PACKAGED, load_reranker

QUESTION = "Which central bank raised its interest rate in July, and who won the chess olympiad in Chennai?"
PASSAGES = ["The Federal Reserve raised its interest rate to 5.5% in July.",
            "Pasta should be cooked in plenty of salted water. The museum reopened its west wing.",
            "India won the chess olympiad held in Chennai.",
            "Tickets for the autumn concert series went on sale on Monday."]


def test_the_combination_averages_its_parts_standardised_scores() -> None:
    combined = load_reranker("sentences:all-MiniLM-L6-v2+bi-encoder:all-MiniLM-L6-v2")
    assert isinstance(combined, CombinedReranker)
    assert combined.name == "sentences:all-MiniLM-L6-v2+bi-encoder:all-MiniLM-L6-v2"
    sentences, whole = combined.parts
    expected = [(a + b) / 2 for a, b in zip(standardise(sentences.score(QUESTION, PASSAGES)),
                                            standardise(whole.score(QUESTION, PASSAGES)))]
    assert combined.score(QUESTION, PASSAGES) == pytest.approx(expected)
    # the unrelated passages score below both answering ones
    scores = combined.score(QUESTION, PASSAGES)
    assert min(scores[0], scores[2]) > max(scores[1], scores[3])
    assert combined.score(QUESTION, []) == []
    # each part's own scores, by its name, are what the mean is made of (a trace keeps them)
    parts = combined.scores_by_part(QUESTION, PASSAGES)
    assert list(parts) == ["sentences:all-MiniLM-L6-v2", "bi-encoder:all-MiniLM-L6-v2"]
    assert parts["sentences:all-MiniLM-L6-v2"] == pytest.approx(sentences.score(QUESTION, PASSAGES))
    assert combined.combine(parts) == pytest.approx(expected)
    # its fusion weight is the mean of its parts' own (0.7 and 1), unless one is given
    assert fusion_weight(combined, None) == pytest.approx(0.85) and fusion_weight(combined, 0.5) == 0.5


def test_a_pair_token_limit_reaches_only_the_cross_encoders_and_training_labels_the_whole() -> None:
    combined = load_reranker(f"{PACKAGED}+sentences:all-MiniLM-L6-v2", max_length=128)
    cross_encoder, sentences = combined.parts
    assert cross_encoder.max_length == 128 and not hasattr(sentences, "max_length")
    assert combined.corpus_facts == cross_encoder.corpus_facts and combined.corpus_facts["corpus"]
    # its fusion weight: the mean of the packaged cross-encoder's recorded 0.5 and the sentences' 0.7
    assert fusion_weight(combined, None) == pytest.approx(0.6)
    # the packaged cross-encoder was trained on every development question: so was the combination
    seen = load_questions(default_questions_path(), limit=1)[0].query
    assert cross_encoder.saw(seen) and combined.saw(seen)
    assert not combined.saw(QUESTION)
    with pytest.raises(MhgraphError, match="holds no cross-encoder: a pair token limit"):
        load_reranker("sentences:all-MiniLM-L6-v2+nanoranker", max_length=128)
    with pytest.raises(MhgraphError, match=r"^reranker 'sentences:all-MiniLM-L6-v2\+': write the rerankers "
                                           r"combined as A\+B, none empty$"):
        load_reranker("sentences:all-MiniLM-L6-v2+")
    with pytest.raises(MhgraphError, match=r"^reranker 'nanoranker\+nanoranker': names one reranker twice$"):
        load_reranker("nanoranker+nanoranker")


def test_a_stages_line_names_a_combination_and_the_chunks_it_scores() -> None:
    stages = parse_stages("candidates=hybrid rerank=kfold:models/reranker-onnx+sentences:all-MiniLM-L6-v2:30")
    assert stages.rerank == "kfold:models/reranker-onnx+sentences:all-MiniLM-L6-v2" and stages.rerank_k == 30
