"""The number format a torch cross-encoder scores in (`rerank_precision`).

- `auto`: bfloat16 autocast where the device runs it fast (a CPU with AMX or AVX512-BF16, a CUDA
  GPU with bf16; mhgraph/training/precision.py), else float32. What mhgraph always did.
- `float32`, `bfloat16`: as named, whatever the device.
- `int8`: the model's linear layers quantized dynamically (weights stored as int8, activations
  quantized per batch as they come), on the CPU. For CPUs without AVX-512 or bf16: there float32 is
  the only fast float format, and int8 matrix products run on AVX2 (FBGEMM's kernels) in about two
  thirds of its time (bench/results/rerank-avx2-cpu-kfold-int8-20-*.md, on an AVX2-only CPU; an
  int8 ONNX export is faster still there). Scores move by quantization
  error; the order they give is what reranking uses.

Why torch's own dynamic quantization (`torch.ao.quantization.quantize_dynamic`): it is the one
int8 path for a torch model that runs fast on a CPU without compiling it (torchao's int8 dynamic
config, tried once here in eager mode, took about twice float32's time: it is made for
torch.compile), and its kernels (FBGEMM) can be held to AVX2 (FBGEMM_ENABLE_INSTRUCTIONS), so its
cost there can be measured on a machine with more.
torch marks that module deprecated; where a torch no longer has it, int8 is a one-line error. An
exported ONNX reranker (`mhgraph reranker export`) has its precision fixed at export instead.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Literal, get_args

from mhgraph.errors import MhgraphError
from mhgraph.training.precision import fast_bf16

if TYPE_CHECKING:
    import torch

Precision = Literal["auto", "float32", "bfloat16", "int8"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
# the methods that rerank say the same of their option
RERANK_PRECISION_HELP = ("The number format a torch cross-encoder reranker scores in: auto (bfloat16 where the "
                         "CPU or GPU runs it fast, else float32; FlagReranker's float32), float32, bfloat16, or "
                         "int8 (its linear layers quantized dynamically, on the CPU: for CPUs without AVX-512 or "
                         "bf16). An exported ONNX reranker keeps the precision it was exported at.")


def check(precision: str) -> str:
    if precision not in PRECISIONS:
        raise MhgraphError(f"rerank_precision '{precision}': use one of {', '.join(PRECISIONS)}")
    return precision


def label(precision: str) -> str:
    """What a reranker's name adds for a precision chosen explicitly (auto adds nothing)."""
    return "" if precision == "auto" else f" ({precision})"


def resolved(precision: str, device: str) -> str:
    """The number format `precision` scores in on `device`: auto made float32 or bfloat16."""
    if precision != "auto":
        return precision
    return "bfloat16" if fast_bf16(device) else "float32"


def device_for(precision: str, device: str | None) -> str | None:
    """The device a cross-encoder loads on: int8 runs on the CPU, so it takes the CPU where no device
    is named (a GPU would be chosen otherwise) and refuses another; the rest take `device`."""
    if precision != "int8":
        return device
    if device is not None and not device.startswith("cpu"):
        raise MhgraphError(f"rerank_precision int8 runs on the CPU only, not on {device}: use auto or bfloat16 there")
    return "cpu"


def quantize_int8(model: torch.nn.Module) -> torch.nn.Module:
    """`model` (on the CPU) with its nn.Linear layers replaced by dynamically quantized int8 ones, in place."""
    import torch

    try:
        from torch.ao.quantization import quantize_dynamic
    except ImportError:
        raise MhgraphError(f"rerank_precision int8 needs torch's dynamic quantization (torch.ao.quantization."
                           f"quantize_dynamic), which torch {torch.__version__} does not have: use float32, or "
                           f"an ONNX export (mhgraph reranker export)") from None
    with warnings.catch_warnings():
        # torch says the module is deprecated, and so are the quantized tensors it makes, each time
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*")
        return quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
