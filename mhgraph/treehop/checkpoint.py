"""TreeHop checkpoints: a folder with model.safetensors and config.json.

config.json names the embedding model and its dimension (a TreeHop model only makes sense in the
embedding space it was trained in), the model's configuration and what it was trained on. Loading
one for a corpus embedded with another model fails with one line that names both.

A k-fold folder (`mhgraph treehop train`) holds folds.json and one checkpoint per fold: each
question is run by the model of its own fold, which never saw it (mhgraph/training/folds.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mhgraph.benchmark import question_key
from mhgraph.embeddings import canonical_model_name
from mhgraph.errors import MhgraphError
from mhgraph.graph.documents import CORPUS_FACTS
from mhgraph.training.folds import FOLDS_FILE, KFold
from mhgraph.treehop.model import TreeHopConfig, TreeHopModel

if TYPE_CHECKING:
    from mhgraph.training.folds import KFold

FORMAT = "mhgraph-treehop"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
# The checkpoint shipped for users: trained on every question of the development split.
PACKAGED = Path(__file__).resolve().parents[1] / "data" / "treehop" / "all-MiniLM-L6-v2"


@dataclass
class Checkpoint:
    model: TreeHopModel
    embedding_model: str
    path: Path
    facts: dict[str, Any]


def save_checkpoint(model: TreeHopModel, directory: Path, embedding_model: str, **facts: Any) -> None:
    from safetensors.torch import save_file

    directory.mkdir(parents=True, exist_ok=True)
    config = {"format": FORMAT, "version": 1, "embedding_model": embedding_model, **model.config.to_dict(),
              **facts}
    (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2, default=str), encoding="utf-8")
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(directory / WEIGHTS_FILE))


def load_checkpoint(directory: Path, embedding_model: str | None = None) -> Checkpoint:
    """The model in `directory`; with `embedding_model`, it must have been trained for that model."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = Path(directory) / CONFIG_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise MhgraphError(f"{path}: not a TreeHop checkpoint config (not a JSON object)")
        if data.get("format") != FORMAT:
            raise KeyError("format")
        config = TreeHopConfig(dimension=int(data["dimension"]), dropout=float(data.get("dropout", 0.0)),
                               terms=tuple(data.get("terms", ("q", "c", "gate"))))
        trained_for = str(data["embedding_model"])
    except FileNotFoundError:
        raise MhgraphError(f"{path}: not found (a TreeHop checkpoint is made by 'mhgraph treehop train')") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise MhgraphError(f"{path}: not a TreeHop checkpoint config (bad or missing {exc})") from None
    if embedding_model and canonical_model_name(embedding_model) != canonical_model_name(trained_for):
        raise MhgraphError(f"{Path(directory)}: TreeHop model trained for embedding model '{trained_for}' "
                           f"({config.dimension} dimensions), but the corpus is embedded with '{embedding_model}': "
                           f"train one for it with 'mhgraph treehop train'")
    model = TreeHopModel(config)
    if model.trainable or (Path(directory) / WEIGHTS_FILE).exists():
        try:
            model.load_state_dict(load_file(str(Path(directory) / WEIGHTS_FILE)))
        except (FileNotFoundError, SafetensorError, RuntimeError) as exc:
            raise MhgraphError(f"{Path(directory) / WEIGHTS_FILE}: cannot load the TreeHop weights "
                               f"({' '.join(str(exc).split())[:200]})") from None
    model.eval()
    return Checkpoint(model, trained_for, Path(directory), data)


class TreeHopModels:
    """One checkpoint, or a k-fold folder's, whose models are picked by the question's fold."""

    def __init__(self, checkpoints: list[Checkpoint], name: str, kfold: "KFold | None" = None,
                 kfold_facts: dict | None = None) -> None:
        self.checkpoints, self.name, self.kfold = checkpoints, name, kfold
        training = checkpoints[0].facts.get("training") or {}
        # the questions a single checkpoint was trained on, as keys (mhgraph.benchmark.question_key)
        self.trained_on = frozenset(training.get("question_keys", ())) if kfold is None else frozenset()
        recorded = kfold_facts if kfold_facts is not None else training
        # the corpus it was trained on, its revision and when it was made (None: not recorded)
        self.corpus_facts = {k: recorded.get(k) for k in CORPUS_FACTS}

    @classmethod
    def load(cls, directory: Path, embedding_model: str | None = None) -> "TreeHopModels":
        directory = Path(directory)
        if not (directory / FOLDS_FILE).exists():
            checkpoint = load_checkpoint(directory, embedding_model)
            training = checkpoint.facts.get("training") or {}
            # a model trained on every question of a corpus (the packaged one is) scores that
            # corpus's questions having seen them: the name says so in every report
            seen = (f" (trained on all {training['questions']} questions of corpus '{training['corpus']}')"
                    if checkpoint.model.trainable and "corpus" in training and "questions" in training else "")
            return cls([checkpoint], f"{directory}{seen}")
        kfold, facts = KFold.load(directory)
        paths = [directory / m for m in facts["models"]]
        if len(paths) != kfold.k:
            raise MhgraphError(f"{directory / FOLDS_FILE}: {kfold.k} folds but {len(paths)} models")
        checkpoints = [load_checkpoint(p, embedding_model) for p in paths]
        trained = checkpoints[0].model.trainable   # q - c and its ablations learn nothing from the folds
        options = facts.get("options", {})
        disjoint = (", evidence-disjoint" if options.get("evidence_disjoint")
                    else ", pair-disjoint" if options.get("pair_disjoint") else "")
        return cls(checkpoints, f"{directory} (in-domain trained, {kfold.k}-fold{disjoint})" if trained
                   else f"{directory} (untrained: {' '.join(checkpoints[0].model.config.terms)})", kfold, facts)

    @property
    def in_domain(self) -> bool:
        """Trained k-fold on the questions it scores (each by its own fold's model)."""
        return self.kfold is not None and self.checkpoints[0].model.trainable

    def in_domain_for(self, corpus: str) -> bool:
        """Trained on this corpus's questions: k-fold (on it, or on a corpus it does not record), or a
        single model whose training names it."""
        trained_on = self.corpus_facts["corpus"]
        if self.in_domain:
            return trained_on in (None, corpus)
        return self.checkpoints[0].model.trainable and trained_on == corpus

    def saw(self, question: str) -> bool:
        """Whether the model that scores `question` was trained on it: never for k-fold models (each
        question is scored by the model of its own fold); for one checkpoint, when its training
        record lists the question."""
        return question_key(question) in self.trained_on

    def for_question(self, question: str) -> TreeHopModel:
        return self.checkpoints[self.kfold.fold(question) if self.kfold else 0].model
