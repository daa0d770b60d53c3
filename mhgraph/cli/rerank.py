"""`mhgraph reranker`: rerankers trained here, and rerankers prepared for a corpus."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import click

from mhgraph.app.reranker_preparation import prepare_reranker
from mhgraph.benchmark import default_questions_path, load_questions, question_key
from mhgraph.cli.method_options import method_options, pop_method_flags
from mhgraph.cli.root import quiet_progress, settings_from
from mhgraph.errors import MhgraphError
from mhgraph.graph.documents import CORPUS_FACTS
from mhgraph.rerank.base import MAX_PAIR_TOKENS
from mhgraph.rerank.onnx import export_kfold_onnx, export_onnx
from mhgraph.retrieval import registry
from mhgraph.training.folds import FOLDS_FILE, KFold
from mhgraph.training.precision import fast_bf16
from mhgraph.training.reranker import TrainingOptions, kept_layers, teacher_folder, train_reranker

# the search whose candidates the cross-encoder learns to rerank, and the method that reranks with it
SEARCH = "metarag"


@click.group("reranker")
def reranker_group() -> None:
    """Train the cross-encoder metarag reranks with (k-fold by question), export it, or prepare a
    reranker for a corpus ahead of its questions."""


@reranker_group.command("train")
@click.option("--out", type=click.Path(path_type=Path), default=Path("models/reranker"), show_default=True,
              help="Folder of the fold models, the final model (all/) and folds.json.")
@click.option("--backbone", default="all-MiniLM-L6-v2", show_default=True,
              help="Transformer to start from (a sentence-transformers name or path).")
@click.option("--folds", default=5, show_default=True, type=click.IntRange(min=2))
@click.option("--layers", type=click.IntRange(min=1),
              help="Keep the backbone's first N transformer layers (default: all): a smaller model that "
                   "scores faster on CPUs without AVX-512.")
@click.option("--teacher", type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="Distil from this k-fold folder (trained here, same --folds and --seed): each fold's model "
                   "starts from the teacher's of its fold, cut to --layers, and learns its logits.")
@click.option("--epochs", default=1.0, show_default=True, type=click.FloatRange(min=0, min_open=True))
@click.option("--negatives", default=6, show_default=True, type=click.IntRange(min=0),
              help="Non-gold candidates per question used as negatives.")
@click.option("--max-length", default=320, show_default=True, type=click.IntRange(min=16))
@click.option("--batch-size", default=16, show_default=True, type=click.IntRange(min=1))
@click.option("--learning-rate", default=4e-5, show_default=True, type=click.FloatRange(min=0, min_open=True))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--bf16/--no-bf16", default=None,
              help="bfloat16 autocast (default: on where the GPU or CPU runs it fast: AMX / AVX512-BF16).")
@click.option("--no-final", is_flag=True, help="Skip the model trained on every question (the one shipped for users).")
@click.option("--only-final", is_flag=True,
              help="Train only the model on every question (for users; no fold models, so nothing to score "
                   "these questions with).")
@click.option("--corpus", help="Corpus the questions' gold chunks are in (default: the graph's only corpus).")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path),
              help="MultiHopRAG.json (default: the benchmark beside the checkout).")
@click.option("--sample", is_flag=True, help="The bundled sample questions and corpus (a quick check).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N questions.")
@method_options(only=(SEARCH,))
@click.pass_context
def train_cmd(ctx: click.Context, out: Path, backbone: str, folds: int, layers: int | None, teacher: Path | None,
              epochs: float,
              negatives: int,
              max_length: int, batch_size: int, learning_rate: float, seed: int, bf16: bool | None, no_final: bool,
              only_final: bool,
              corpus: str | None, questions_path: Path | None, sample: bool, limit: int | None,
              **metarag: object) -> None:
    """Train a cross-encoder on (question, chunk) pairs: gold chunks against the near misses of
    the metarag search as configured, one model per fold plus one on every question."""
    from mhgraph.app.training import reranker_data  # torch
    from mhgraph.cli.root import check_models_folder, corpus_flag, question_flags, sample_corpus_path

    check_models_folder(out)
    if no_final and only_final:
        raise MhgraphError("--no-final and --only-final exclude each other (the fold models alone, or the model "
                           "on every question alone)")
    settings = settings_from(ctx, pop_method_flags(metarag), corpus=corpus_flag(corpus, sample))
    # candidates as the search gives them: no reranker
    search = registry.options_for(settings, SEARCH).model_copy(update={"reranker": None, "rerank": False})
    path = sample_corpus_path().with_name("questions.json") if sample else questions_path or default_questions_path()
    questions = load_questions(path, limit=limit)
    options = TrainingOptions(backbone=backbone, folds=folds, layers=layers, seed=seed, epochs=epochs,
                              teacher=str(teacher) if teacher else None,
                              negatives=negatives,
                              max_length=max_length, batch_size=batch_size, learning_rate=learning_rate,
                              final=not no_final, only_final=only_final, bf16=fast_bf16() if bf16 is None else bf16)
    # refused before the candidates are searched
    if teacher:
        teacher_folder(teacher, KFold(folds, seed), not no_final or only_final, layers)
    else:
        kept_layers(backbone, layers)
    click.echo(f"candidates: {SEARCH} {dict(search)} for {len(questions)} questions ({path})")
    data = reranker_data(settings, questions, SEARCH, search)
    record = train_reranker(questions, data.gold, data.candidates, data.texts, options, out, log=click.echo,
                            questions_file=str(path), candidates_from=data.candidates_from, **data.corpus_facts)
    if only_final:
        click.echo(f"written {out}/all/ and {out}/folds.json (no fold models); use it on other data with: "
                   f"--reranker {out}/all, or ship it with: mhgraph reranker export {out}/all")
        return
    click.echo(f"written {out}/ ({record['k']} fold models{', all/' if options.final else ''}, folds.json); "
               f"evaluate with: mhgraph eval --method metarag --reranker kfold:{out} "
               f"{question_flags(sample, data.corpus_facts['corpus'], path)}")


@reranker_group.command("export")
@click.argument("source", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Folder to write model.onnx, tokenizer.json and reranker.json to.")
@click.option("--quantize/--no-quantize", default=True, show_default=True,
              help="int8 weights (ONNX Runtime dynamic quantization): about a quarter of the size.")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="The questions it was trained on (default: those folds.json beside SOURCE records for it).")
@click.option("--rerank-weight", type=click.FloatRange(0, 1),
              help="The fusion weight metarag uses with it when none is given (default: 1, its order alone).")
@click.option("--max-length", default=MAX_PAIR_TOKENS, show_default=True, type=click.IntRange(min=16),
              help="Tokens a (question, passage) pair is cut to, as the cross-encoder path scores them.")
def export_cmd(source: Path, out: Path, quantize: bool, questions_path: Path | None,
               rerank_weight: float | None, max_length: int) -> None:
    """Export the cross-encoder in SOURCE (e.g. models/reranker/all) to ONNX, run with ONNX Runtime
    alone: what a user loads with --reranker OUT. It records the questions it was trained on, so an
    evaluation on them is labelled as not held out. SOURCE may be a k-fold folder (folds.json
    inside): every fold model is exported, and --reranker kfold:OUT scores with them."""
    if (source / FOLDS_FILE).is_file():
        _, record = KFold.load(source)
        recorded = Path(record.get("questions_file") or "")
        path = questions_path or (recorded if recorded.is_file() else None)
        if path is None:
            raise MhgraphError(f"{source / FOLDS_FILE}: the questions the folds were drawn from "
                               f"('{recorded}') are not found: give them with --questions")
        written = export_kfold_onnx(source, out, [q.query for q in load_questions(path)], quantize=quantize,
                                    rerank_weight=rerank_weight, max_length=max_length,
                                    exported=date.today().isoformat())
        click.echo(f"written {out}/ ({written['k']} fold models, {written['quantization']}); "
                   f"evaluate with: --reranker kfold:{out}")
        return
    folds = source.parent / FOLDS_FILE
    record = _training_record(folds) if folds.is_file() else {}
    final = record.get("final") or {}
    if not isinstance(final, dict) or final.get("path") != source.name:
        final = {}
    if not isinstance(final.get("question_keys") or [], list):
        raise MhgraphError(f"{folds}: 'final.question_keys' is not a list of question keys")
    if questions_path is not None:
        keys = sorted({question_key(q.query) for q in load_questions(questions_path)})
    elif final.get("question_keys"):
        keys = final["question_keys"]
    else:
        raise MhgraphError(f"{source}: which questions it was trained on is not recorded in {folds}: "
                           f"give them with --questions")
    facts = {"exported": date.today().isoformat(),
             "training": {**{k: record.get(k) for k in CORPUS_FACTS},
                          "questions_file": Path(record.get("questions_file") or
                                                                                  questions_path or "").name,
                          "questions": len(keys), "pairs": final.get("pairs"), "seconds": final.get("seconds"),
                          "options": record.get("options")} if record else {"questions": len(keys)}}
    description = export_onnx(source, out, quantize=quantize, trained_on=keys, rerank_weight=rerank_weight,
                              max_length=max_length, **facts)
    size = sum(p.stat().st_size for p in out.iterdir()) / 2**20
    click.echo(f"written {out}/ ({size:.1f} MB; {description['quantization']}; trained on {len(keys)} questions); "
               f"use it with: --reranker {out}")


def _training_record(path: Path) -> dict:
    """The record `mhgraph reranker train` wrote beside its final model, or a one-line error."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MhgraphError(f"{path}: not a training record ({exc})") from None
    if not isinstance(record, dict):
        raise MhgraphError(f"{path}: not a training record (a JSON object)")
    return record


@reranker_group.command("prepare")
@click.argument("reranker")
@click.option("--corpus", help="Corpus whose chunks to read (default: the graph's only corpus).")
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(min=1),
              help="Chunks read and computed at a time.")
@click.option("--prune", is_flag=True,
              help="Then delete from the store every passage no chunk of any corpus in the graph holds (what "
                   "updated or deleted documents left behind); the file shrinks.")
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
@click.pass_context
def prepare_cmd(ctx: click.Context, reranker: str, corpus: str | None, batch_size: int, prune: bool,
                no_progress: bool) -> None:
    """Compute what RERANKER keeps of each chunk of a corpus ahead of its questions, in the cache
    folder, so that no question pays for it: for sentences:MODEL, every chunk's sentences and their
    vectors (about 15 chunks a second on two cores with all-MiniLM-L6-v2); of a combination (A+B),
    each part that keeps something. Chunks stored already are skipped: run it again after an ingest,
    or resume a stopped run."""
    if no_progress:
        quiet_progress()
    settings = settings_from(ctx, corpus=corpus)
    for prepared in prepare_reranker(settings, reranker, batch_size=batch_size, progress=not no_progress,
                                     prune=prune):
        click.echo("\n".join(prepared.lines()))
