"""Cross-encoders as ONNX: `mhgraph reranker export` writes them, `OnnxCrossEncoderReranker` runs them.

Why: the cross-encoder trained here is 87 MB as safetensors. Its ONNX form with int8 weights
(ONNX Runtime's dynamic quantization: weights stored as int8, activations quantized per batch at
run time) is about a quarter of that, small enough to ship inside the package, and it runs with
ONNX Runtime and `tokenizers` alone, no torch.

An exported folder holds model.onnx, tokenizer.json and reranker.json: the format, the maximum
length, the activation the cross-encoder applied to its logit (so scores equal the source model's,
which matters when they are fused with the search's), the quantization, where it came from, and
the questions it was trained on (as hashes of their text: see `question_key`), so that an
evaluation can say when the reranker saw the questions it is scoring.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from mhgraph.benchmark import question_key
from mhgraph.embeddings.base import quiet_loading
from mhgraph.errors import MhgraphError
from mhgraph.graph.documents import CORPUS_FACTS
from mhgraph.rerank.base import MAX_PAIR_TOKENS, cut_label
from mhgraph.rerank.focus import FOCUS_LABEL, focused
from mhgraph.training.folds import KFold

FORMAT = "mhgraph-onnx-cross-encoder"
DESCRIPTION = "reranker.json"
ACTIVATIONS = ("sigmoid", "identity")


def is_onnx_folder(path: Path) -> bool:
    return (path / DESCRIPTION).is_file()


def export_onnx(source: str | Path, out: Path, *, quantize: bool = True, trained_on: Iterable[str] = (),
                rerank_weight: float | None = None, max_length: int = MAX_PAIR_TOKENS,
                **facts: Any) -> dict[str, Any]:
    """Export the sentence-transformers cross-encoder at `source` to `out` (int8 weights when
    `quantize`). `trained_on`: the keys (`question_key`) of the questions it was trained on;
    `rerank_weight`: the fusion weight to use when a user gives none; `max_length`: the tokens a
    pair is cut to, as mhgraph's cross-encoder path scores. Returns reranker.json's content."""
    import torch
    from sentence_transformers import CrossEncoder

    try:
        import onnx  # noqa: F401  (torch's exporter and the quantizer write through it)
    except ImportError:
        raise MhgraphError("exporting a reranker needs onnx: pip install -e '.[rerank]'") from None

    try:
        with quiet_loading():
            encoder = CrossEncoder(str(source), device="cpu", max_length=max_length)
    except (OSError, ValueError) as exc:
        raise MhgraphError(f"{source}: not a cross-encoder ({' '.join(str(exc).split())[:200]})") from None
    if encoder.num_labels != 1:
        raise MhgraphError(f"{source}: a reranker has one output; this model has {encoder.num_labels}")
    activation = "sigmoid" if isinstance(encoder.activation_fn, torch.nn.Sigmoid) else "identity"
    if activation == "identity" and not isinstance(encoder.activation_fn, torch.nn.Identity):
        raise MhgraphError(f"{source}: activation {type(encoder.activation_fn).__name__} is not exported "
                           f"(only {', '.join(ACTIVATIONS)})")
    out.mkdir(parents=True, exist_ok=True)
    model = encoder.model.eval()
    tokens = encoder.tokenizer(["a question"], ["a passage"], return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tokens]
    plain = out / ("model-fp32.onnx" if quantize else "model.onnx")

    class Logits(torch.nn.Module):   # positional inputs in a fixed order, the logits alone out
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, inputs))).logits

    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    with torch.no_grad():
        torch.onnx.export(Logits(), tuple(tokens[n] for n in names), str(plain), input_names=names,
                          output_names=["logits"], dynamic_axes={**axes, "logits": {0: "batch"}},
                          opset_version=17, dynamo=False)
    if quantize:
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.quantization.shape_inference import quant_pre_process

        # shape inference and graph optimisation first, as ONNX Runtime advises before quantizing
        prepared = out / "model-prepared.onnx"
        quant_pre_process(str(plain), str(prepared), skip_symbolic_shape=True)
        # per-channel int8 weights: on this benchmark's candidates they keep the float32 model's order
        # best of ONNX Runtime's dynamic schemes (Spearman 0.977 against 0.935 per tensor)
        quantize_dynamic(str(prepared), str(out / "model.onnx"), weight_type=QuantType.QInt8, per_channel=True)
        plain.unlink()
        prepared.unlink()
    encoder.tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    description = {"format": FORMAT, "max_length": int(encoder.max_length), "activation": activation,
                   "quantization": "int8 weights per channel (ONNX Runtime dynamic quantization)" if quantize else "none",
                   **({"rerank_weight": rerank_weight} if rerank_weight is not None else {}),
                   "source": str(source), **facts, "trained_on": sorted(set(trained_on))}
    (out / DESCRIPTION).write_text(json.dumps(description, indent=1) + "\n", encoding="utf-8")
    return description


def export_kfold_onnx(source: Path, out: Path, questions: Sequence[str], **options: Any) -> dict[str, Any]:
    """Export every fold model of the k-fold folder `source` (folds.json) to `out`, under the same
    names, and write folds.json there: `--reranker kfold:OUT` then scores each question with its
    fold's ONNX model. `questions`: the texts the folds were drawn from, so each fold model records
    the questions it was trained on (every other fold's). Returns the folds.json written."""
    kfold, record = KFold.load(source)
    models = record.get("models") or []
    if not models:
        raise MhgraphError(f"{source / 'folds.json'}: no fold models to export (trained with --only-final)")
    for fold, model in enumerate(models):
        trained_on = {question_key(q) for q in questions if kfold.fold(q) != fold}
        description = export_onnx(source / model, out / model, trained_on=trained_on, fold=fold, **options)
    kept = {k: v for k, v in record.items() if k not in ("k", "seed", "models", "final")}
    weight = options.get("rerank_weight")
    return kfold.save(out, models, **kept, exported_from=str(source),
                      **({"rerank_weight": weight} if weight is not None else {}),
                      quantization=description["quantization"])


class OnnxCrossEncoderReranker:
    """A folder `export_onnx` wrote: pairs tokenized as the cross-encoder did (longest-first
    truncation to its maximum length, or to `max_length` when given), one ONNX Runtime pass per batch;
    with `focus`, a passage longer than the cut leaves room for is read as its excerpt that holds the
    most of the question (focus.py)."""

    def __init__(self, folder: Path | str, *, name: str | None = None, batch_size: int = 32,
                 threads: int | None = None, max_length: int | None = None, focus: bool = False) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        path = self.folder / DESCRIPTION
        try:
            description = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(description, dict):
                raise ValueError("not a JSON object")
            if description.get("format") != FORMAT:
                raise ValueError(f"format is {description.get('format')!r}, not {FORMAT!r}")
            if description.get("activation") not in ACTIVATIONS:
                raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}")
            exported_length = int(description["max_length"])
            if not 0.0 <= float(description.get("rerank_weight", 1.0)) <= 1.0:
                raise ValueError("rerank_weight must be from 0 to 1")
        except FileNotFoundError:
            raise MhgraphError(f"{path}: not found (an ONNX reranker folder is made by "
                               f"'mhgraph reranker export')") from None
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise MhgraphError(f"{path}: not an ONNX reranker description ({exc})") from None
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            options.intra_op_num_threads = threads
        try:
            self.session = ort.InferenceSession(str(self.folder / "model.onnx"), options,
                                                providers=["CPUExecutionProvider"])
            self.tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        except Exception as exc:   # onnxruntime raises its own exception types
            raise MhgraphError(f"{self.folder}: the ONNX reranker does not load "
                               f"({' '.join(str(exc).split())[:200]})") from None
        # a shorter cut than the exported one: faster, less of each passage seen (bench/rerank_cost.py)
        self.max_length = max_length or exported_length
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        self.tokenizer.enable_padding()
        self.focus = focus
        if focus:
            self.counter = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
            self.counter.no_truncation()
            self.counter.no_padding()
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.description = description
        self.sigmoid = description["activation"] == "sigmoid"
        self.batch_size = batch_size
        # the weight to fuse its scores with the search's at, when the user gives none (retrieval/metarag.py)
        self.rerank_weight = float(description.get("rerank_weight", 1.0))
        self.trained_on = frozenset(description.get("trained_on") or ())
        # the corpus it was trained on, its revision and when it was made (None: not recorded)
        self.corpus_facts = {k: (description.get("training") or {}).get(k) for k in CORPUS_FACTS}
        self.name = f"onnx-cross-encoder:{name or self.folder}"
        self.name += cut_label(self.max_length, exported_length) + (FOCUS_LABEL if focus else "")
        if self.trained_on:
            self.name += f" (in-domain trained on {len(self.trained_on)} questions)"

    def saw(self, question: str) -> bool:
        """Whether this model was trained on `question`: its scores for it are not held out."""
        return question_key(question) in self.trained_on

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self.counter.encode_batch(list(texts), add_special_tokens=False)]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        if self.focus:
            # the question and the pair's special tokens, as the pair's encoding counts them
            room = self.max_length - len(self.counter.encode(query, "").ids)
            passages = focused(query, passages, room, self.count_tokens)
        out = np.empty(len(passages), dtype=np.float64)
        for start in range(0, len(passages), self.batch_size):
            batch = self.tokenizer.encode_batch([(query, p) for p in passages[start:start + self.batch_size]])
            columns = {"input_ids": [e.ids for e in batch], "attention_mask": [e.attention_mask for e in batch],
                       "token_type_ids": [e.type_ids for e in batch]}
            feed = {n: np.asarray(columns[n], dtype=np.int64) for n in self.inputs}
            logits = self.session.run(None, feed)[0].reshape(len(batch), -1)[:, -1]
            out[start:start + len(batch)] = logits
        if self.sigmoid:
            out = 1.0 / (1.0 + np.exp(-out))
        return out.tolist()
