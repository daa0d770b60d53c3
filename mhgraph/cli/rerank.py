"""`mhgraph reranker`: rerankers trained here."""

from __future__ import annotations

from pathlib import Path

import click

from mhgraph.cli.root import cli, metarag_options, settings_from


@cli.group("reranker")
def reranker_group() -> None:
    """Train the cross-encoder metarag reranks with (k-fold by question)."""


@reranker_group.command("train")
@click.option("--out", type=click.Path(path_type=Path), default=Path("models/reranker"), show_default=True,
              help="Folder of the fold models, the final model (all/) and folds.json.")
@click.option("--backbone", default="all-MiniLM-L6-v2", show_default=True,
              help="Transformer to start from (a sentence-transformers name or path).")
@click.option("--folds", default=5, show_default=True, type=click.IntRange(min=2))
@click.option("--epochs", default=1.0, show_default=True, type=click.FloatRange(min=0, min_open=True))
@click.option("--negatives", default=6, show_default=True, type=click.IntRange(min=0),
              help="Non-gold candidates per question used as negatives.")
@click.option("--max-length", default=320, show_default=True, type=click.IntRange(min=16))
@click.option("--batch-size", default=16, show_default=True, type=click.IntRange(min=1))
@click.option("--learning-rate", default=4e-5, show_default=True, type=float)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--bf16/--no-bf16", default=None,
              help="bfloat16 autocast (default: on where the GPU or CPU runs it fast: AMX / AVX512-BF16).")
@click.option("--no-final", is_flag=True, help="Skip the model trained on every question (the one shipped for users).")
@click.option("--corpus", help="Corpus the questions' gold chunks are in (default: the graph's only corpus).")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path),
              help="MultiHopRAG.json (default: the benchmark beside the checkout).")
@click.option("--sample", is_flag=True, help="The bundled sample questions and corpus (a quick check).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@metarag_options
@click.pass_context
def train_cmd(ctx: click.Context, out: Path, backbone: str, folds: int, epochs: float, negatives: int,
              max_length: int, batch_size: int, learning_rate: float, seed: int, bf16: bool | None, no_final: bool,
              corpus: str | None, questions_path: Path | None, sample: bool, limit: int | None, rerank: bool | None,
              **metarag: object) -> None:
    """Train a cross-encoder on (question, chunk) pairs: gold chunks against the near misses of
    the metarag search as configured, one model per fold plus one on every question."""
    import dataclasses

    from tqdm import tqdm

    from mhgraph.cli.root import SAMPLE_CORPUS_NAME, sample_corpus_path
    from mhgraph.eval.questions import load_questions
    from mhgraph.eval.runner import default_questions_path, gold_matcher
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import resolve_corpus
    from mhgraph.rerank.train import TrainingOptions, chunk_texts, train_kfold
    from mhgraph.retrieval import build_retriever
    from mhgraph.training.precision import fast_bf16

    settings = settings_from(ctx, corpus=corpus or (SAMPLE_CORPUS_NAME if sample else None), **metarag)
    settings = dataclasses.replace(settings, reranker=None)   # candidates as the search gives them
    path = sample_corpus_path().with_name("questions.json") if sample else questions_path or default_questions_path()
    questions = load_questions(path, limit=limit)
    options = TrainingOptions(backbone=backbone, folds=folds, seed=seed, epochs=epochs, negatives=negatives,
                              max_length=max_length, batch_size=batch_size, learning_rate=learning_rate,
                              final=not no_final, bf16=fast_bf16() if bf16 is None else bf16)
    with connect(settings) as driver:
        name = resolve_corpus(driver, settings.neo4j_database, settings.corpus)
        gold = gold_matcher(driver, settings.neo4j_database, name).gold_sets(questions)
        retriever = build_retriever("metarag", driver, settings, corpus=name, questions=questions)
        k = settings.metarag_candidates
        click.echo(f"candidates: metarag {retriever.params} for {len(questions)} questions ({path})")
        candidates = {q.id: [c.chunk_id for c in retriever.search(q.query, top_k=k).hops[0].chunks]
                      for q in tqdm(questions, desc="candidates", unit="q")}
        wanted = {c for ids in candidates.values() for c in ids} | {c for ids in gold.values() for c in ids}
        texts = chunk_texts(driver, settings.neo4j_database, sorted(wanted))
    record = train_kfold(questions, gold, candidates, texts, options, out, log=click.echo,
                         questions_file=str(path), corpus=name, candidates_from=retriever.params)
    click.echo(f"written {out}/ ({record['k']} fold models{', all/' if options.final else ''}, folds.json); "
               f"evaluate with: mhgraph eval --method metarag --reranker kfold:{out}")
