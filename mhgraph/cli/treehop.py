"""`mhgraph treehop`: the TreeHop model, trained here k-fold by question."""

from __future__ import annotations

from pathlib import Path

import click

from mhgraph.benchmark import default_questions_path, load_questions
from mhgraph.cli.root import quiet_progress, settings_from


@click.group("treehop")
def treehop_group() -> None:
    """Train TreeHop's UpdateGate on a corpus's questions (k-fold by question)."""


@treehop_group.command("train")
@click.option("--out", type=click.Path(path_type=Path), default=Path("models/treehop"), show_default=True,
              help="Folder of the fold models, the final model (all/), folds.json and loss.png.")
@click.option("--folds", default=5, show_default=True, type=click.IntRange(min=2))
@click.option("--epochs", default=200, show_default=True, type=click.IntRange(min=1), help="At most; early stop on a dev split.")
@click.option("--patience", default=5, show_default=True, type=click.IntRange(min=1),
              help="Epochs without a better dev loss before stopping.")
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=2))
@click.option("--learning-rate", default=1e-3, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="AdamW's (the paper's 6e-5 is too slow for a benchmark's few thousand examples).")
@click.option("--temperature", default=0.15, show_default=True, type=click.FloatRange(min=0, min_open=True))
@click.option("--negatives", default=5, show_default=True, type=click.IntRange(min=0),
              help="Near misses from the vector index per example (besides the batch's other targets).")
@click.option("--dropout", default=0.1, show_default=True, type=click.FloatRange(0, 1, max_open=True))
@click.option("--terms", default="q,c,gate", show_default=True,
              help="Terms of the update q - c + UpdateGate(q, c) to keep (ablations: e.g. c,gate or q,c).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--no-final", is_flag=True, help="Skip the model trained on every question (the one for users).")
@click.option("--pair-disjoint", is_flag=True,
              help="Also keep from each fold model every example whose two chunks are gold chunks of one of "
                   "its held-out questions (no held-out hop seen in training).")
@click.option("--evidence-disjoint", is_flag=True,
              help="Keep from each fold model every example that touches a gold chunk of one of its held-out "
                   "questions (none of their evidence seen in training; stricter than --pair-disjoint).")
@click.option("--corpus", help="Corpus the questions' gold chunks are in (default: the graph's only corpus).")
@click.option("--model", "embedding_model", help="Embedding model (default: the one the corpus was ingested with).")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path),
              help="MultiHopRAG.json (default: the benchmark beside the checkout).")
@click.option("--sample", is_flag=True, help="The bundled sample questions and corpus (a quick check).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bars.")
@click.pass_context
def train_cmd(ctx: click.Context, out: Path, folds: int, epochs: int, patience: int, batch_size: int,
              learning_rate: float, temperature: float, negatives: int, dropout: float, terms: str, seed: int,
              no_final: bool, pair_disjoint: bool, evidence_disjoint: bool, corpus: str | None,
              embedding_model: str | None, questions_path: Path | None, sample: bool, limit: int | None,
              no_progress: bool) -> None:
    """Train the UpdateGate on (question, gold chunk) -> other gold chunk examples, one model per
    fold plus one on every question; InfoNCE against near misses and in-batch negatives."""
    from mhgraph.app.training import treehop_data  # torch
    from mhgraph.cli.root import check_models_folder, corpus_flag, question_flags, sample_corpus_path
    from mhgraph.training.treehop import TrainingOptions, train_treehop
    from mhgraph.treehop.model import kept_terms

    if no_progress:
        quiet_progress()
    check_models_folder(out)
    settings = settings_from(ctx, corpus=corpus_flag(corpus, sample),
                             embedding_model=embedding_model)
    path = sample_corpus_path().with_name("questions.json") if sample else questions_path or default_questions_path()
    terms_kept = kept_terms(tuple(t.strip() for t in terms.split(",") if t.strip()))   # before any data is gathered
    questions = load_questions(path, limit=limit)
    options = TrainingOptions(folds=folds, seed=seed, epochs=epochs, patience=patience, batch_size=batch_size,
                              learning_rate=learning_rate, temperature=temperature, negatives=negatives,
                              dropout=dropout, terms=terms_kept,
                              final=not no_final, pair_disjoint=pair_disjoint or evidence_disjoint,
                              evidence_disjoint=evidence_disjoint)
    gathered = treehop_data(settings, questions, progress=not no_progress)
    data, name, model = gathered.data, gathered.corpus, gathered.embedder.model_name
    click.echo(f"{len(data.examples)} examples from {len({e.question_id for e in data.examples})} of "
               f"{len(questions)} questions ({path}); corpus '{name}', embeddings {model}")
    record = train_treehop(data, questions, options, out, model, log=click.echo,
                           progress=not no_progress, questions_file=str(path), **gathered.corpus_facts)
    click.echo(f"written {out}/ ({record['k']} fold models{', all/' if options.final else ''}, folds.json, loss.png); "
               f"evaluate with: mhgraph eval --method treehop --treehop-model {out} "
               f"{question_flags(sample, name, path)}")
