"""Rerankers by name: `load_reranker(spec)`.

- a cross-encoder, by hub name or local path (`--reranker NAME_OR_PATH`): FlagEmbedding's
  `FlagReranker` for the bge-reranker family (as its authors load it: fp16 off on CPU, scores are
  logits), sentence-transformers' `CrossEncoder` for every other one, mhgraph's own trained model
  included (`mhgraph reranker train`). No registry package carries a cross-encoder's weights, so
  here a hub name only loads where its files are already cached or the hub is reachable;
- `nanoranker`: the PyPI package's bundled ranker (two ONNX models: a multilingual sentence encoder
  and a small MLP over the pair; not a cross-encoder);
- `bi-encoder:MODEL`: rescoring with another embedding model (any name `load_embedder` takes, e.g.
  `bi-encoder:bge-small-en-v1.5`): cosine of the question's and each passage's vectors;
- `sentences:MODEL`: a passage scored by its best sentence (`sentence_windows.py`): the best cosine
  between a window of the question's words and one of its sentences under MODEL, plus the
  question's rarest words held in one sentence; no training; fused at its own weight, 0.7;
- `kfold:DIR`: the cross-encoders `mhgraph reranker train` made, k-fold by question: each question
  is scored by the model that did not see it (its fold's). DIR/all, the model trained on every
  question, loads as a plain cross-encoder path for other data;
- a folder `mhgraph reranker export` wrote (reranker.json beside model.onnx), run with ONNX Runtime,
  and `multihop-rag-minilm`, the one the package carries (mhgraph/data/reranker/): the cross-encoder
  trained here on every development question, exported with int8 weights;
- `A+B`: any of these combined (`combined.py`), each one's scores standardised, then averaged
  (`kfold:DIR+sentences:MODEL`); a pair token limit and a precision reach the cross-encoders among them.

A torch cross-encoder (a model, a bge-reranker, `kfold:DIR` of torch fold models) scores in the
precision named (`precision.py`: bfloat16 where the device runs it fast, float32, or int8); an ONNX
export keeps the one it was exported at.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mhgraph.embeddings import load_embedder
from mhgraph.embeddings.base import quiet_loading
from mhgraph.errors import MhgraphError
from mhgraph.graph.documents import CORPUS_FACTS, warn_if_changed
from mhgraph.rerank.base import MAX_PAIR_TOKENS, Reranker, cut_label
from mhgraph.rerank.combined import JOIN, CombinedReranker, combined_parts
from mhgraph.rerank.focus import FOCUS_LABEL, focused
from mhgraph.rerank.kept import KeptPassages
from mhgraph.rerank.onnx import OnnxCrossEncoderReranker, is_onnx_folder
from mhgraph.rerank.precision import Precision, device_for, quantize_int8, resolved
from mhgraph.rerank.precision import check as check_precision
from mhgraph.rerank.precision import label as precision_label
from mhgraph.rerank.sentence_windows import SENTENCES, SentenceWindowReranker
from mhgraph.training.folds import FOLDS_FILE, KFold

if TYPE_CHECKING:
    import neo4j

NANORANKER = "nanoranker"
BI_ENCODER = "bi-encoder:"
KFOLD = "kfold:"
PACKAGED = "multihop-rag-minilm"
PACKAGED_DIR = Path(__file__).resolve().parents[1] / "data" / "reranker" / PACKAGED
# the methods that rerank say the same of their option that cuts pairs shorter
RERANK_TOKENS_HELP = ("Tokens a (question, passage) pair is cut to for a cross-encoder reranker (default: its "
                      "own: 512, or the length an ONNX folder was exported at). Fewer: faster, less of each "
                      "passage seen (bench/results/rerank-cost-*.md).")
RERANK_FOCUS_HELP = ("A passage longer than a cross-encoder's pair cut leaves room for is read as its run of "
                     "sentences holding the most of the question's words (rare words weigh more), not its start. "
                     "Measured on MultiHop-RAG with cross-encoders trained on passage starts, it loses at 128 and "
                     "80 tokens (bench/results/rerank-avx2-cpu-kfold-onnx-focus-20-multihop-rag.md).")


class CrossEncoderReranker:
    """sentence-transformers' CrossEncoder: one forward pass per (query, passage) pair, in the
    number format `precision` names (precision.py): by default bfloat16 autocast where the device
    runs it fast (about 3x faster on a CPU with AMX), else float32; int8 for CPUs without either.
    The order of the scores is what reranking uses."""

    def __init__(self, model: str, *, max_length: int = MAX_PAIR_TOKENS, batch_size: int = 32,
                 device: str | None = None, precision: Precision = "auto", focus: bool = False) -> None:
        from sentence_transformers import CrossEncoder

        check_precision(precision)
        if (Path(model) / FOLDS_FILE).is_file():   # a k-fold folder, named without its prefix
            raise MhgraphError(f"reranker '{model}' is a k-fold folder (it holds {FOLDS_FILE}): name it "
                               f"'kfold:{model}', which scores each question with the fold model that never saw it")
        device = device_for(precision, device)
        try:
            with quiet_loading():
                self.model = CrossEncoder(model, max_length=max_length, device=device)
        except (OSError, ValueError) as exc:
            raise MhgraphError(f"reranker '{model}' could not be loaded as a cross-encoder: "
                               f"{' '.join(str(exc).split())[:300]}") from None
        self.precision = precision
        self.bf16 = resolved(precision, str(self.model.device)) == "bfloat16"
        if precision == "int8":
            quantize_int8(self.model.model)
        self.name = (f"cross-encoder:{model}{cut_label(max_length, MAX_PAIR_TOKENS)}{precision_label(precision)}"
                     + (FOCUS_LABEL if focus else ""))
        self.batch_size = batch_size
        self.max_length, self.focus = max_length, focus

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.model.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        import torch

        if not passages:
            return []
        if self.focus:
            # the question and the pair's special tokens, as the pair's encoding counts them
            room = self.max_length - len(self.model.tokenizer(query, "")["input_ids"])
            passages = focused(query, passages, room, self.count_tokens)
        with torch.autocast(self.model.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            scores = self.model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                        show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(scores, dtype=np.float64).reshape(len(passages), -1)[:, -1].tolist()


class FlagEmbeddingBroken(ImportError):
    """FlagEmbedding is installed but fails to import: 1.4.2 imports transformers'
    modeling_attn_mask_utils, which transformers 5.10 removed."""


class FlagCrossEncoderReranker:
    """FlagEmbedding's FlagReranker, the loader its authors give for bge-reranker-base/large/v2-m3."""

    def __init__(self, model: str, *, max_length: int = MAX_PAIR_TOKENS, batch_size: int = 32,
                 device: str | None = None, precision: Precision = "auto") -> None:
        try:
            from FlagEmbedding import FlagReranker
        except ImportError as exc:
            if importlib.util.find_spec("FlagEmbedding") is not None:   # installed, but it does not import
                raise FlagEmbeddingBroken(f"FlagEmbedding does not import here ({exc})") from None
            raise MhgraphError(f"reranker '{model}' is a bge-reranker: it needs FlagEmbedding "
                               "(pip install -e '.[rerank]')") from None

        try:
            with quiet_loading():
                self.model = FlagReranker(model, use_fp16=False, devices=device or "cpu")
        except (OSError, ValueError) as exc:
            raise MhgraphError(f"reranker '{model}' could not be loaded with FlagReranker: "
                               f"{' '.join(str(exc).split())[:300]}") from None
        # float32 whatever `precision` (auto or float32) says: it names only what a report shows
        self.name = f"flag-reranker:{model}{cut_label(max_length, MAX_PAIR_TOKENS)}{precision_label(precision)}"
        self.max_length, self.batch_size = max_length, batch_size

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self.model.compute_score([[query, p] for p in passages], batch_size=self.batch_size,
                                          max_length=self.max_length)
        return [float(s) for s in np.atleast_1d(scores)]


class NanoRankerReranker:
    name = NANORANKER

    def __init__(self) -> None:
        try:
            import nanoranker
        except ImportError:
            raise MhgraphError("the nanoranker reranker needs its package (pip install -e '.[rerank]')") from None
        self._rank = nanoranker.rank

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        ranked = self._rank(query, list(passages), top_n=len(passages), normalize_scores=False)
        by_text: dict[str, list[float]] = {}
        for text, score in ranked:   # identical passages come back once each, in some order
            by_text.setdefault(text, []).append(float(score))
        return [by_text[p].pop() if by_text.get(p) else float("-inf") for p in passages]


class BiEncoderReranker:
    """Cosine between the question and each passage under another embedding model; passage
    vectors are kept (a chunk comes back for many questions)."""

    def __init__(self, model: str, cache_dir: Path | None = None, *, keep: int = 50_000) -> None:
        self.embedder = load_embedder(model, cache_dir)
        self.name = f"{BI_ENCODER}{self.embedder.model_name}"
        self._vectors: KeptPassages[np.ndarray] = KeptPassages(keep)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        vectors = self._vectors.take(passages, lambda missing: dict(zip(missing,
                                                                        self.embedder.embed_documents(missing))))
        q = self.embedder.embed_queries([query])[0]
        return [float(np.dot(q, vectors[p])) for p in passages]


def is_flag_model(spec: str) -> bool:
    """bge-reranker-* by name or by a local folder's name."""
    return "bge-reranker" in Path(spec).name.lower() or "bge-reranker" in spec.lower()


def _reads_pairs(spec: str) -> bool:
    """Whether reranker `spec` reads (question, passage) pairs cut to a token limit: a cross-encoder."""
    return not (spec == NANORANKER or spec.startswith((BI_ENCODER, SENTENCES)))


def load_reranker(spec: str, cache_dir: Path | None = None, device: str | None = None,
                  precision: Precision = "auto", max_length: int | None = None, focus: bool = False) -> Reranker:
    """The reranker `spec` names. `precision`: the number format torch cross-encoders score in
    (precision.py; auto: bfloat16 autocast where the device runs it fast, else float32); an ONNX
    export keeps its own. `max_length`: the tokens a (question, passage) pair is cut to (None: the
    reranker's own, MAX_PAIR_TOKENS or an ONNX folder's exported length). `focus`: a passage longer
    than the cut leaves room for is read as its excerpt holding the most of the question (focus.py).
    Only cross-encoders have these: naming one for another reranker is a one-line error."""
    check_precision(precision)
    if (names := combined_parts(spec)) is not None:
        if not all(names):
            raise MhgraphError(f"reranker '{spec}': write the rerankers combined as A{JOIN}B, none empty")
        if len(set(names)) < len(names):
            raise MhgraphError(f"reranker '{spec}': names one reranker twice")
        _applies(spec, names, precision, max_length, focus)
        return CombinedReranker([load_reranker(n, cache_dir, device,
                                               *((precision, max_length, focus) if _reads_pairs(n)
                                                 else ("auto", None, False)))
                                 for n in names])
    _applies(spec, [spec], precision, max_length, focus)
    if spec == NANORANKER:
        return NanoRankerReranker()
    if spec.startswith(BI_ENCODER):
        return BiEncoderReranker(spec[len(BI_ENCODER):], cache_dir)
    if spec.startswith(SENTENCES):
        return SentenceWindowReranker(spec[len(SENTENCES):], cache_dir)
    if spec.startswith(KFOLD):
        return KFoldReranker(Path(spec[len(KFOLD):]), device=device, precision=precision, max_length=max_length,
                             focus=focus)
    if spec == PACKAGED or is_onnx_folder(Path(spec)):
        _exported_keeps_its_precision(spec, precision)
        if spec == PACKAGED:
            return OnnxCrossEncoderReranker(PACKAGED_DIR, name=PACKAGED, max_length=max_length, focus=focus)
        return OnnxCrossEncoderReranker(spec, max_length=max_length, focus=focus)
    length = max_length or MAX_PAIR_TOKENS
    # FlagReranker scores in float32 (fp16 off); bfloat16, int8 and focused passages are CrossEncoder's
    # (the sigmoid of the same logits: the same order)
    if is_flag_model(spec) and precision in ("auto", "float32") and not focus:
        try:
            return FlagCrossEncoderReranker(spec, device=device, max_length=length, precision=precision)
        except FlagEmbeddingBroken as exc:
            # the bge-rerankers are plain sequence classifiers: CrossEncoder computes the same logits
            # (through a sigmoid, which keeps their order)
            warnings.warn(f"{exc}: reranker '{spec}' is loaded with sentence-transformers' CrossEncoder instead "
                          f"of FlagReranker", stacklevel=2)
    return CrossEncoderReranker(spec, device=device, precision=precision, max_length=length, focus=focus)


_PRECISION = "a precision (rerank_precision)"


def _applies(spec: str, names: list[str], precision: str, max_length: int | None, focus: bool) -> None:
    """A pair token limit, a precision or focused passages named for reranker `spec` (its parts
    `names`) holding no cross-encoder is a one-line error."""
    if any(_reads_pairs(n) for n in names):
        return
    held = "holds no cross-encoder" if len(names) > 1 else "is not a cross-encoder"
    for given, what in ((max_length is not None, "a pair token limit (rerank_tokens)"),
                        (precision != "auto", _PRECISION), (focus, "focused passages (rerank_focus)")):
        if given:
            raise MhgraphError(f"reranker '{spec}' {held}: {what} does not apply to it")


def _exported_keeps_its_precision(spec: str, precision: str) -> None:
    if precision != "auto":
        raise MhgraphError(f"reranker '{spec}' is an ONNX export, which keeps the precision it was exported at: "
                           f"{_PRECISION} applies to torch cross-encoders (name the model folder it was "
                           f"exported from)")


class KFoldReranker:
    """Cross-encoders trained here k-fold by question (mhgraph reranker train): each question is
    scored by the model of its own fold, which never saw it. In-domain trained: reports say so.
    Fold models may be ONNX folders (`mhgraph reranker export` of the k-fold folder)."""

    def __init__(self, directory: Path, device: str | None = None, precision: Precision = "auto",
                 max_length: int | None = None, focus: bool = False) -> None:
        self.directory = Path(directory)
        self.kfold, facts = KFold.load(self.directory)
        # the corpus its questions' gold chunks are in, its revision then and when it was made
        self.corpus_facts = {k: facts.get(k) for k in CORPUS_FACTS}
        # the fusion weight an export recorded for its fold models (`reranker export --rerank-weight`)
        self.rerank_weight = float(facts.get("rerank_weight", 1.0))
        self.paths = [self.directory / m for m in facts["models"]]
        if not self.paths:
            raise MhgraphError(f"{self.directory / 'folds.json'}: no fold models (trained with --only-final); "
                               f"{self.directory / 'all'} loads as a plain cross-encoder: --reranker "
                               f"{self.directory / 'all'}")
        if len(self.paths) != self.kfold.k:
            raise MhgraphError(f"{self.directory / 'folds.json'}: {self.kfold.k} folds but {len(self.paths)} models")
        if any(is_onnx_folder(p) for p in self.paths):
            _exported_keeps_its_precision(f"{KFOLD}{self.directory}", precision)
        device = device_for(precision, device)   # int8's refusal of a GPU before the first question
        self.name = (f"{KFOLD}{self.directory} (in-domain trained, {self.kfold.k}-fold"
                     + (f", {max_length}-token pairs" if max_length else "")
                     + (f", {precision}" if precision != "auto" else "") + ")" + (FOCUS_LABEL if focus else ""))
        self._models: dict[int, Reranker] = {}
        self._device, self._precision, self._max_length, self._focus = device, precision, max_length, focus

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        fold = self.kfold.fold(query)
        if fold not in self._models:
            path = self.paths[fold]
            self._models[fold] = (OnnxCrossEncoderReranker(path, max_length=self._max_length, focus=self._focus)
                                  if is_onnx_folder(path)
                                  else CrossEncoderReranker(str(path), device=self._device, precision=self._precision,
                                                            max_length=self._max_length or MAX_PAIR_TOKENS,
                                                            focus=self._focus))
        return self._models[fold].score(query, passages)


def warn_of_training(reranker: Reranker, spec: str, driver: neo4j.Driver, database: str | None,
                     corpus: str) -> None:
    """warn_if_changed for each trained reranker in `reranker` (loaded from `spec`), a combination's
    parts each by its own name: one part trained on this corpus does not hide another trained elsewhere."""
    parts = getattr(reranker, "parts", None) or [reranker]
    # load_reranker made a combination's parts from this same split of its spec
    for part, name in zip(parts, combined_parts(spec) or [spec], strict=True):
        warn_if_changed(driver, database, corpus, f"reranker {name}", getattr(part, "corpus_facts", None),
                        f"mhgraph reranker train --corpus {corpus} --questions FILE, then name its folder")
