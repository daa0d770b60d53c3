"""`mhgraph treehop train`: the UpdateGate trained on a corpus's questions, k-fold by question.

Examples. For a question whose evidence facts a and b (a != b) both have gold chunks, every gold
chunk ci of a gives the example (question embedding, ci) -> cj, cj the first gold chunk of b:
after retrieving ci, the next query must lead to the other fact. Negatives: the question's near
misses in the vector index (its nearest chunks that are gold for none of its facts), `negatives`
of them per example, drawn afresh each epoch, plus every other example's positive in the batch.
The gold chunks, near misses and embeddings come in as data (training_data): `mhgraph treehop
train` gathers them from the graph with eval's gold rule and the retriever's vector search, so
training imports neither.

Loss: InfoNCE over cosine similarities at temperature 0.15, five near misses, batches of 64,
AdamW, dropout in the UpdateGate: the paper's settings, the embedder frozen (vectors come from the
graph). Early stop on a dev split of the training questions (by question, from a hash of the text)
when its loss has not improved for `patience` epochs, keeping the best epoch. One setting differs:
the learning rate is 1e-3, not the paper's 6e-5. The paper had 111k examples; a benchmark's
questions give some 7k here, and at 6e-5 the loss is still falling fast after 40 epochs (dev
InfoNCE 3.1 against 2.0 at 1e-3, bench/results/treehop-multihop-rag.md). `--learning-rate 6e-5`
gives the paper's.

k-fold (folds.py and kfold.py here, the machinery the reranker's training shares): one model per
fold, trained on the other folds' questions; folds.json records each fold's training question ids,
so a test can prove no question is in its own training fold. With final=True, one more model is
trained on every question, for users' own corpora.

Questions of one corpus share articles, so a held-out question's hop (ci -> cj) is often another
question's training example too: the fold model has then learnt that very hop. With
pair_disjoint=True a fold model is also kept from every training example whose two chunks are
both gold chunks of one held-out question, so none of the held-out questions' hops was seen in
training: what is left is what the model generalises to new pairs of chunks. That still lets a fold
model learn a held-out question's gold chunks from other hops through them (on MultiHop-RAG most
held-out questions have every gold chunk in some training hop); evidence_disjoint=True keeps from it
every example that touches a gold chunk of a held-out question, and those chunks from its near
misses, so none of their evidence was seen: what is left is what the model does on evidence it never
trained on, as on a new corpus.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from tqdm import tqdm

from mhgraph.benchmark import question_key
from mhgraph.errors import MhgraphError
from mhgraph.training.folds import FINAL_MODEL, KFold, fold_of
from mhgraph.training.kfold import Fold, train_fold_models
from mhgraph.treehop.checkpoint import save_checkpoint
from mhgraph.treehop.model import TERMS, TreeHopConfig, TreeHopModel

DEV_SEED = 7919          # the dev split's hash seed: unrelated to the k-fold seed


@dataclass(frozen=True)
class TrainingOptions:
    folds: int = 5
    seed: int = 0
    epochs: int = 200
    patience: int = 5
    batch_size: int = 64
    learning_rate: float = 1e-3
    temperature: float = 0.15
    negatives: int = 5
    dropout: float = 0.1
    dev_share: float = 0.1
    terms: tuple[str, ...] = TERMS
    final: bool = True
    pair_disjoint: bool = False
    evidence_disjoint: bool = False      # implies pair_disjoint: no held-out gold chunk in any example


@dataclass(frozen=True)
class Example:
    question_id: str
    query: int            # row of the question embedding
    chunk: int            # row of ci (the chunk retrieved first)
    target: int           # row of cj (the chunk the next query must find)
    near_misses: tuple[int, ...]


@dataclass
class TrainingData:
    """Embeddings as rows (questions, chunks) and the examples that point into them."""

    questions: np.ndarray
    chunks: np.ndarray
    examples: list[Example]
    gold: dict[str, frozenset[int]]     # per question id, the rows of its gold chunks


def needed_chunks(fact_chunks: dict[str, list[list[str]]], near: dict[str, list[str]]) -> list[str]:
    """The chunks whose embeddings the examples point into: every gold chunk and every near miss, sorted."""
    return sorted({c for facts in fact_chunks.values() for f in facts for c in f} | {c for v in near.values() for c in v})


def training_data(questions: Sequence[Any], vectors: np.ndarray, fact_chunks: dict[str, list[list[str]]],
                  near: dict[str, list[str]], chunk_vectors: Mapping[str, Sequence[float]]) -> TrainingData:
    """vectors: the question embeddings, in question order; fact_chunks: per question id, the gold
    chunk ids of each of its evidence facts (by the benchmark's rule); near: per question id, its
    nearest chunks in the vector index, best first; chunk_vectors: the stored embeddings of
    needed_chunks(fact_chunks, near) (the vectors the index searches)."""
    ids = needed_chunks(fact_chunks, near)
    chunk_rows = {c: i for i, c in enumerate(ids)}
    chunks = np.asarray([chunk_vectors[c] for c in ids], dtype=np.float32).reshape(len(ids), vectors.shape[1])
    question_rows = {q.id: i for i, q in enumerate(questions)}
    gold = {qid: frozenset(chunk_rows[c] for ids in facts for c in ids) for qid, facts in fact_chunks.items()}
    return TrainingData(vectors, chunks, build_examples(questions, fact_chunks, near, question_rows, chunk_rows), gold)


def held_out_pairs(data: TrainingData, held_out: Sequence[Any]) -> set[frozenset[int]]:
    """Every pair of gold chunks of a held-out question: the hops a pair-disjoint fold model must not see."""
    pairs: set[frozenset[int]] = set()
    for q in held_out:
        rows = sorted(data.gold.get(q.id, ()))
        pairs.update(frozenset((a, b)) for i, a in enumerate(rows) for b in rows[i + 1:])
    return pairs


def held_out_chunks(data: TrainingData, held_out: Sequence[Any]) -> frozenset[int]:
    """Every gold chunk of a held-out question: the chunks an evidence-disjoint fold model must not see."""
    return frozenset(row for q in held_out for row in data.gold.get(q.id, ()))


def build_examples(questions: Sequence[Any], fact_chunks: dict[str, list[list[str]]], near: dict[str, list[str]],
                   question_rows: dict[str, int], chunk_rows: dict[str, int]) -> list[Example]:
    """fact_chunks: per question id, the gold chunk ids of each of its facts; near: per question id,
    its nearest chunks in the index, best first."""
    out = []
    for q in questions:
        facts = [ids for ids in fact_chunks.get(q.id, []) if ids]
        if len(facts) < 2:
            continue
        gold = {c for ids in facts for c in ids}
        misses = tuple(chunk_rows[c] for c in near.get(q.id, []) if c not in gold)
        for a, first in enumerate(facts):
            for b, second in enumerate(facts):
                if a == b or set(first) & set(second):
                    continue   # the same chunk holds both facts: nothing to hop to
                for ci in first:
                    out.append(Example(q.id, question_rows[q.id], chunk_rows[ci], chunk_rows[second[0]], misses))
    return out


def infonce(model: TreeHopModel, data: TrainingData, batch: Sequence[Example], negatives: int, temperature: float,
            rng: random.Random):
    """Mean InfoNCE of a batch: each example's target against its near misses and the batch's targets."""
    import torch
    from torch.nn import functional as F

    q = torch.from_numpy(data.questions[[e.query for e in batch]])
    c = torch.from_numpy(data.chunks[[e.chunk for e in batch]])
    targets = torch.from_numpy(data.chunks[[e.target for e in batch]])
    nexts = model(q, c)                                                     # (B, d), normalised
    in_batch = nexts @ targets.T                                            # (B, B): diagonal = positives
    rows = []
    for e in batch:
        drawn = rng.sample(e.near_misses, min(negatives, len(e.near_misses)))
        rows.append(drawn + [e.target] * (negatives - len(drawn)))          # too few misses: pad, masked below
    misses = torch.from_numpy(data.chunks[np.asarray(rows, dtype=np.int64).reshape(-1)]).view(len(batch), negatives, -1)
    hard = torch.einsum("bd,bnd->bn", nexts, misses)
    pad = torch.tensor([[j >= len(e.near_misses) for j in range(negatives)] for e in batch])
    hard = hard.masked_fill(pad, float("-inf"))
    # another example's target is no negative when it is this one's too, or gold for the same question
    same = torch.tensor([[i != j and (a.target == b.target or a.question_id == b.question_id)
                          for j, b in enumerate(batch)] for i, a in enumerate(batch)])
    in_batch = in_batch.masked_fill(same, float("-inf"))
    logits = torch.cat([in_batch, hard], dim=1) / temperature
    return F.cross_entropy(logits, torch.arange(len(batch)))


def train_model(data: TrainingData, train: Sequence[Example], dev: Sequence[Example], options: TrainingOptions,
                log: Callable[[str], None] = print, progress: bool = True) -> tuple[TreeHopModel, dict[str, Any]]:
    """One model, early-stopped on `dev`; its losses per epoch and the seconds it took."""
    import torch

    if not train:
        raise MhgraphError("no TreeHop training examples (no question with two evidence facts found in the graph)")
    torch.manual_seed(options.seed)
    rng = random.Random(options.seed)
    model = TreeHopModel(TreeHopConfig(dimension=data.chunks.shape[1], dropout=options.dropout, terms=options.terms))
    history: dict[str, Any] = {"train_loss": [], "dev_loss": [], "best_epoch": 0}
    started = time.perf_counter()
    if not model.trainable:   # q - c and its ablations: nothing to learn
        return model, {**history, "seconds": 0.0}
    optimiser = torch.optim.AdamW(model.parameters(), lr=options.learning_rate)
    best, best_state, stale = float("inf"), None, 0
    order = list(train)
    bar = tqdm(range(options.epochs), desc="treehop train", unit="epoch", disable=not progress)
    for epoch in bar:
        model.train()
        rng.shuffle(order)
        losses = []
        for start in range(0, len(order), options.batch_size):
            loss = infonce(model, data, order[start:start + options.batch_size], options.negatives,
                           options.temperature, rng)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
        dev_loss = evaluate_loss(model, data, dev or train, options)
        history["train_loss"].append(round(float(np.mean(losses)), 5))
        history["dev_loss"].append(round(dev_loss, 5))
        bar.set_postfix(train=f"{np.mean(losses):.4f}", dev=f"{dev_loss:.4f}")
        if dev_loss < best - 1e-4:
            best, stale, history["best_epoch"] = dev_loss, 0, epoch + 1
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            stale += 1
            if stale >= options.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    history["seconds"] = round(time.perf_counter() - started, 1)
    # too few questions for a dev share: the best epoch is the training loss's (fixed batches), and says so
    measured = "dev loss" if dev else "training loss: no dev examples"
    log(f"  {len(history['train_loss'])} epochs, best {history['best_epoch']} ({measured} {best:.4f}), "
        f"{history['seconds']:.0f} s")
    return model, history


def evaluate_loss(model: TreeHopModel, data: TrainingData, examples: Sequence[Example], options: TrainingOptions) -> float:
    """InfoNCE on fixed batches and fixed negatives (seeded), without dropout."""
    import torch

    model.eval()
    rng = random.Random(0)
    with torch.no_grad():
        losses = [infonce(model, data, examples[s:s + options.batch_size], options.negatives, options.temperature,
                          rng).item() * len(examples[s:s + options.batch_size])
                  for s in range(0, len(examples), options.batch_size)]
    return float(sum(losses) / max(len(examples), 1))


def split_dev(examples: Sequence[Example], texts: dict[str, str], share: float) -> tuple[list[Example], list[Example]]:
    """(train, dev) by question: a question's examples all go to one side."""
    buckets = 1000
    dev_ids = {qid for qid, text in texts.items() if fold_of(text, buckets, DEV_SEED) < share * buckets}
    return [e for e in examples if e.question_id not in dev_ids], [e for e in examples if e.question_id in dev_ids]


def plot_losses(histories: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for i, (name, h) in enumerate(histories.items()):
        epochs = range(1, len(h["train_loss"]) + 1)
        ax.plot(epochs, h["train_loss"], color=f"C{i}", label=f"{name} train")
        ax.plot(epochs, h["dev_loss"], color=f"C{i}", linestyle="--", label=f"{name} dev")
    ax.set_xlabel("epoch")
    ax.set_ylabel("InfoNCE loss")
    ax.set_title("TreeHop UpdateGate training")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def train_treehop(data: TrainingData, questions: Sequence[Any], options: TrainingOptions, out: Path,
                  embedding_model: str, log: Callable[[str], None] = print, progress: bool = True,
                  **facts: Any) -> dict[str, Any]:
    """One model per fold and, with options.final, one on every question; checkpoints, folds.json
    and loss.png in `out`."""
    kfold = KFold(options.folds, options.seed)
    texts = {q.id: q.query for q in questions}
    histories: dict[str, dict[str, Any]] = {}

    def fit(fold: Fold, **more: Any) -> dict[str, Any]:
        ids = {q.id for q in fold.training}
        examples = [e for e in data.examples if e.question_id in ids]
        kept = examples
        if options.evidence_disjoint and fold.held_out:
            chunks = held_out_chunks(data, fold.held_out)
            # nor as a near miss: a held-out gold chunk learnt as "not this one" is seen too
            kept = [replace(e, near_misses=tuple(c for c in e.near_misses if c not in chunks)) for e in examples
                    if e.chunk not in chunks and e.target not in chunks]
            if not kept:
                raise MhgraphError(f"{fold.name}: every training example touches a gold chunk of a held-out question; "
                                   "use more folds (each then holds out fewer questions), or --pair-disjoint")
        elif options.pair_disjoint and fold.held_out:
            pairs = held_out_pairs(data, fold.held_out)
            kept = [e for e in examples if frozenset((e.chunk, e.target)) not in pairs]
        withheld, examples = len(examples) - len(kept), kept
        train, dev = split_dev(examples, {i: texts[i] for i in ids}, options.dev_share)
        log(f"{fold.name}: {len(fold.training)} questions, {len(train)} training and {len(dev)} dev examples"
            + (f" ({withheld} withheld: {'evidence' if options.evidence_disjoint else 'hops'} of held-out questions)"
               if withheld else ""))
        model, history = train_model(data, train, dev, options, log, progress)
        histories[fold.name] = history
        save_checkpoint(model, fold.directory, embedding_model, training={
            "questions": len(fold.training), "examples": len(train), "dev_examples": len(dev), **history, **facts,
            **more})
        return {"training_questions": len(fold.training), "examples": len(train), "dev_examples": len(dev),
                "withheld_examples": withheld, "best_epoch": history["best_epoch"], "seconds": history["seconds"]}

    def fold_model(fold: Fold) -> dict[str, Any]:
        return {"held_out": len(fold.held_out), **fit(fold),
                "training_question_ids": sorted(q.id for q in fold.training)}

    def final_model(fold: Fold) -> dict[str, Any]:
        # used alone (--treehop-model DIR/all): it records what it saw, so an eval can say so
        return {"path": FINAL_MODEL, **fit(fold, question_keys=sorted({question_key(q.query) for q in fold.training}))}

    trained = train_fold_models(questions, kfold, out, fold_model, final_model if options.final else None)
    plot_losses(histories, out / "loss.png")
    record: dict[str, Any] = {"options": {**asdict(options), "terms": list(options.terms)}, "folds": trained.folds,
                              "embedding_model": embedding_model, **facts}
    if trained.final is not None:
        record["final"] = trained.final
    return kfold.save(out, trained.models, **record)
