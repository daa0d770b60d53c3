"""`mhgraph reranker train`: a cross-encoder trained here, k-fold by question.

Examples come from the benchmark's development questions on one corpus: for each question with
gold chunks, every gold chunk is a positive, and the first `negatives` non-gold chunks among the
candidates the configured metarag search returns (the near misses the reranker will face) are
negatives. The backbone is a transformer a registry package carries (all-MiniLM-L6-v2's, by
default) with a new one-logit head, trained with sentence-transformers' CrossEncoderTrainer and
binary cross-entropy (positives weighted by the negative/positive ratio).

One model per fold is trained on the other folds' questions (folds.py and kfold.py here), so that
`--reranker kfold:DIR` scores every question with the model that never saw it; with final=True
one more model is trained on every question, for users (never for scoring these questions).

Distilled (`teacher`, a k-fold folder trained here with the same folds): each fold's model starts
from the teacher's model of that fold, cut to its first `layers` layers (dropping a fine-tuned
model's top layers keeps more than cutting the backbone before training), and learns the teacher's
logits on the same pairs by mean squared error (Hofstätter et al. 2020, "Improving efficient neural
ranking models with cross-architecture knowledge distillation"): a smaller model for CPUs without
AVX-512 that is held out as its teacher is, fold by fold.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import neo4j

from mhgraph import cypher
from mhgraph.benchmark import question_key
from mhgraph.embeddings.base import quiet_loading
from mhgraph.errors import MhgraphError
from mhgraph.rerank.models import CrossEncoderReranker
from mhgraph.training.folds import FINAL_MODEL, KFold
from mhgraph.training.kfold import Fold, train_fold_models
from mhgraph.training.precision import default_device

DEFAULT_BACKBONE = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class TrainingOptions:
    backbone: str = DEFAULT_BACKBONE
    folds: int = 5
    seed: int = 0
    epochs: float = 1.0
    negatives: int = 6
    max_length: int = 320
    batch_size: int = 16
    learning_rate: float = 4e-5
    final: bool = True
    only_final: bool = False    # no fold models: the model for users alone (it must not score these questions)
    bf16: bool = False      # bfloat16 autocast: on CPUs with AMX / AVX512-BF16 about 1.7x faster to train
    # keep the backbone's first N transformer layers (None: all): a smaller model scores faster, for
    # CPUs without AVX-512 (dropping the top layers keeps most of a fine-tuned model's quality:
    # Sajjad et al., "On the effect of dropping layers of pre-trained transformer models", 2023)
    layers: int | None = None
    # a k-fold folder (the same folds and seed) to distil from: its fold models' weights to start
    # from and their logits to learn (None: the backbone and the gold labels)
    teacher: str | None = None


@dataclass(frozen=True)
class Example:
    question: str
    passage: str
    label: float


def chunk_texts(driver: neo4j.Driver, database: str | None, ids: Sequence[str]) -> dict[str, str]:
    records, _, _ = driver.execute_query(cypher.load("training/chunk_texts"), ids=list(ids), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return {r["chunk_id"]: r["text"] for r in records}


def examples(questions: Sequence[Any], gold: dict[str, list[str]], candidates: dict[str, list[str]],
             texts: dict[str, str], negatives: int) -> list[Example]:
    """Positives: each question's gold chunks; negatives: its first `negatives` non-gold candidates."""
    out = []
    for q in questions:
        wanted = gold.get(q.id) or []
        if not wanted:
            continue
        out += [Example(q.query, texts[c], 1.0) for c in wanted]
        out += [Example(q.query, texts[c], 0.0) for c in [c for c in candidates[q.id] if c not in wanted][:negatives]]
    return out


def kept_layers(backbone: str, layers: int | None) -> dict[str, int] | None:
    """The configuration that keeps the first `layers` layers of `backbone` (a name or path; None:
    all); more than it has is refused (the missing ones would start from random weights)."""
    if layers is None:
        return None
    from transformers import AutoConfig

    from mhgraph.embeddings.sentence import resolve_model

    with quiet_loading():
        config = AutoConfig.from_pretrained(resolve_model(backbone))
    has = getattr(config, "num_hidden_layers", None)
    if has is None:
        raise MhgraphError(f"--layers {layers}: backbone '{backbone}' does not say how many layers it has")
    if layers > has:
        raise MhgraphError(f"--layers {layers}: backbone '{backbone}' has {has} layers")
    return {"num_hidden_layers": layers}


def teacher_folder(teacher: str | Path, kfold: KFold, final: bool, layers: int | None) -> Path:
    """The k-fold folder `teacher`, checked: torch fold models on the same folds (and a final model
    when one is to be distilled) with at least `layers` layers, else a one-line error."""
    directory = Path(teacher)
    taught, facts = KFold.load(directory)
    if (taught.k, taught.seed) != (kfold.k, kfold.seed):
        raise MhgraphError(f"teacher {directory}: {taught.k} folds, seed {taught.seed}; the model trained here has "
                           f"{kfold.k}, seed {kfold.seed} (a fold's teacher must not have seen its questions)")
    wanted = [directory / m for m in facts["models"]] + ([directory / FINAL_MODEL] if final else [])
    for path in wanted:
        if not (path / "config.json").is_file():
            raise MhgraphError(f"teacher {path}: no torch cross-encoder there (config.json; an ONNX export "
                               f"cannot be trained from)" + (" (or train with --no-final)" if path.name == FINAL_MODEL
                                                             else ""))
        kept_layers(str(path), layers)
    return directory


def taught(train: Sequence[Example], teacher: Path, max_length: int) -> list[Example]:
    """`train` labelled with the logits of the cross-encoder in `teacher`, in float32."""
    model = CrossEncoderReranker(str(teacher), max_length=max_length, precision="float32")
    by_question: dict[str, list[int]] = {}
    for i, e in enumerate(train):
        by_question.setdefault(e.question, []).append(i)
    labels = [0.0] * len(train)
    for question, rows in by_question.items():
        for i, score in zip(rows, model.score(question, [train[i].passage for i in rows]), strict=True):
            labels[i] = score
    return [Example(e.question, e.passage, label) for e, label in zip(train, labels, strict=True)]


def train_model(train: Sequence[Example], options: TrainingOptions, out: Path, cache_dir: Path | None = None,
                start: Path | None = None) -> float:
    """Train one cross-encoder on `train`, save it to `out`; the seconds it took. `start`: the
    teacher model it is distilled from (its weights to start from; `train`'s labels are its logits)."""
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss, MSELoss
    from transformers import set_seed

    from mhgraph.embeddings.sentence import resolve_model

    if not train:
        raise MhgraphError("no training examples (no question with gold chunks in the training folds)")
    started = time.perf_counter()
    set_seed(options.seed)
    device = default_device()
    backbone = str(start) if start is not None else resolve_model(options.backbone)
    with quiet_loading():
        model = CrossEncoder(backbone, num_labels=1, max_length=options.max_length, device=device,
                             config_kwargs=kept_layers(str(start) if start is not None else options.backbone,
                                                       options.layers))
    positives = sum(e.label for e in train)
    dataset = Dataset.from_dict({"query": [e.question for e in train], "passage": [e.passage for e in train],
                                 "label": [e.label for e in train]})
    args = CrossEncoderTrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=options.epochs,
        per_device_train_batch_size=options.batch_size, learning_rate=options.learning_rate, warmup_steps=0.1,
        save_strategy="no", logging_steps=50, report_to="none", seed=options.seed, dataloader_num_workers=0,
        disable_tqdm=False, bf16=options.bf16, use_cpu=device == "cpu")
    loss = (MSELoss(model) if start is not None else
            BinaryCrossEntropyLoss(model, pos_weight=torch.tensor((len(train) - positives) / max(positives, 1.0))))
    CrossEncoderTrainer(model=model, args=args, train_dataset=dataset, loss=loss).train()
    model.save_pretrained(str(out))
    return time.perf_counter() - started


def train_reranker(questions: Sequence[Any], gold: dict[str, list[str]], candidates: dict[str, list[str]],
                   texts: dict[str, str], options: TrainingOptions, out: Path,
                   log: Callable[[str], None] = print, **facts: Any) -> dict[str, Any]:
    """One model per fold (trained on the other folds) and, with options.final, one on all; folds.json
    records the split, the options, the example counts and the seconds per model."""
    kfold = KFold(options.folds, options.seed)
    teacher = (teacher_folder(options.teacher, kfold, options.final or options.only_final, options.layers)
               if options.teacher else None)

    def trained(train: list[Example], fold: Fold) -> float:
        if teacher is None:
            return train_model(train, options, fold.directory)
        start = teacher / fold.name
        return train_model(taught(train, start, options.max_length), options, fold.directory, start=start)

    def fold_model(fold: Fold) -> dict[str, Any]:
        train = examples(fold.training, gold, candidates, texts, options.negatives)
        log(f"fold {fold.index + 1}/{options.folds}: {len(fold.training)} training questions ({len(train)} pairs), "
            f"{len(fold.held_out)} held out")
        seconds = trained(train, fold)
        log(f"fold {fold.index + 1}/{options.folds}: trained in {seconds:.0f} s")
        return {"training_questions": len(fold.training), "held_out": len(fold.held_out), "pairs": len(train),
                "positives": int(sum(e.label for e in train)), "seconds": round(seconds, 1)}

    def final_model(fold: Fold) -> dict[str, Any]:
        train = examples(fold.training, gold, candidates, texts, options.negatives)
        seconds = trained(train, fold)
        log(f"final model on all {len(fold.training)} questions: trained in {seconds:.0f} s")
        # the final model's questions, as keys: an export carries them, so that an evaluation can
        # tell when this model scores questions it saw
        return {"questions": len(fold.training), "pairs": len(train), "seconds": round(seconds, 1),
                "path": FINAL_MODEL, "question_keys": sorted({question_key(q.query) for q in fold.training})}

    trained = train_fold_models(questions, kfold, out, None if options.only_final else fold_model,
                                final_model if options.final or options.only_final else None)
    record: dict[str, Any] = {"options": asdict(options), "folds": trained.folds}
    if trained.final is not None:
        record["final"] = trained.final
    return kfold.save(out, trained.models, **record, **facts)
