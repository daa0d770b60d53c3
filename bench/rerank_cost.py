"""What a reranker costs per question on this CPU, and what each shorter pair cut keeps.

    python bench/rerank_cost.py --reranker kfold:models/reranker-multihop-rag-kfold-128-onnx \
        --tokens 512,256,128 --weights 1,0.5 --per-type 75 --out bench/results/rerank-cost-multihop-rag

`--isa native,avx2` measures each cut twice: as this CPU runs it, and with the code paths held to
AVX2, to estimate the cost on a CPU without AVX-512, AMX or bf16 from one that has them. Held, the
process sees a CPU without them: ATen's kernels, oneDNN, MKL and numpy's OpenBLAS are told by their
environment variables, and ONNX Runtime, which has no such switch and picks its kernels from the
CPUID instruction alone, gets CPUID answered with those extensions' bits cleared (bench/cpuid_avx2.c,
built with the C compiler and loaded first; it needs the kernel's CPUID faulting, the `cpuid_fault`
flag). Each runs in a process of its own, since the libraries read what they see as they load.
Without CPUID faulting or a C compiler an ONNX reranker is measured natively only (a one-line error
otherwise). `--precision`: the
number format a torch cross-encoder scores in (auto: bfloat16 where this CPU runs it fast, float32
held to AVX2; int8: its linear layers quantized dynamically, as `--rerank-precision int8` runs it;
only for a reranker that has a torch cross-encoder). `--tokens none`: the passages whole, for a
reranker without a pair limit (the sentence and bi-encoder rerankers); `--cache-dir` the cache
whose prepared sentences (`mhgraph reranker prepare`) the sentence reranker reads.

Candidates are metarag's (rules filters, hybrid search, K = 20: the candidates the compose stage
`filter=rules candidates=hybrid` reranks), computed once; every cut reranks the same 20 and keeps
K' = 10, by the reranker's order alone (weight 1) or fused with the search's score (below 1, each
standardised), from one scoring per question. Per cut: milliseconds per
question for the 20 pairs (p50, p95; the CPU and its vector extensions recorded, since int8 and
bf16 speed depend on them), the tokens a pair holds, and gold-chunk measures (a gold chunk in the
first 4; the share of gold chunks in the first 10). Those are the cuts' quality against one
another, not the official rule: the pipeline's official figures come from `mhgraph eval`
(bench/compose.sh). A k-fold reranker scores each question with the model that never saw it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from environment import describe, machine, versions
from markdown import split_label, table
from reranker_package import Scored, filtered_hybrid_candidates
from tqdm import tqdm

from mhgraph.benchmark import load_questions
from mhgraph.rerank.base import rerank
from mhgraph.rerank.models import load_reranker
from mhgraph.rerank.precision import PRECISIONS, resolved

DEFAULT_QUESTIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop-rag" / "MultiHopRAG.json"
EXTENSIONS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")
# each library's own switch for the widest vector code it may run: set before the process starts
HELD_TO = {
    "native": {},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
             "OPENBLAS_CORETYPE": "Haswell", "FBGEMM_ENABLE_INSTRUCTIONS": "AVX2"},
}
SWITCHES = sorted({name for held in HELD_TO.values() for name in held})
# what hides the wider extensions from CPUID itself, for the libraries that have no switch (ONNX Runtime)
CPUID_HELD_SOURCE = Path(__file__).with_name("cpuid_avx2.c")
CPUID_HELD_LIBRARY = "cpuid_avx2.so"


def cpuid_held_library(folder: Path) -> tuple[Path | None, str]:
    """bench/cpuid_avx2.c built into FOLDER, or None and why it cannot hold CPUID here."""
    if "cpuid_fault" not in cpu_flags():
        return None, "this CPU or kernel has no CPUID faulting (no cpuid_fault in /proc/cpuinfo)"
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if compiler is None:
        return None, "no C compiler (cc) to build bench/cpuid_avx2.c"
    library = folder / CPUID_HELD_LIBRARY
    built = subprocess.run([compiler, "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(library),
                            str(CPUID_HELD_SOURCE)],
                           capture_output=True, text=True, check=False)
    if built.returncode != 0:
        return None, f"bench/cpuid_avx2.c did not build: {built.stderr.strip().splitlines()[-1:]}"
    return library, ""


def cpu_flags() -> set[str]:
    """The CPU's flags as the kernel lists them (/proc/cpuinfo), not as CPUID answers a held process."""
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return set()
    return set(flags.split(":", 1)[1].split())


def vector_extensions() -> list[str]:
    """Which of the extensions int8 / bf16 inference speed depends on this CPU has."""
    present = cpu_flags()
    return [e for e in EXTENSIONS if e in present]


def extensions_seen() -> list[str]:
    """The wide extensions CPUID reports to this process, as numpy's start-up read it (held: none of them)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:   # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__
    return sorted(name for name in ("AVX2", "AVX512F", "AVX512_CLX", "AVX512_SPR") if __cpu_features__.get(name))


def cpuid_is_held() -> bool:
    """Whether this process runs with bench/cpuid_avx2.c loaded (measure_under preloads it)."""
    return CPUID_HELD_LIBRARY in os.environ.get("LD_PRELOAD", "")


def code_paths() -> dict[str, object]:
    """The switches this process runs under and what the libraries loaded report of them."""
    import threadpoolctl

    out: dict[str, object] = {name: os.environ.get(name) for name in SWITCHES}
    out["cpuid_held"] = cpuid_is_held()
    out["cpuid_reports"] = extensions_seen()
    if (torch := sys.modules.get("torch")) is not None:
        out["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    out["blas"] = sorted({f"{i['internal_api']} {i.get('architecture') or ''}".strip()
                          for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"})
    out["onnxruntime"] = "onnxruntime" in sys.modules
    if torch is not None:   # where an int8 torch model's matrix products run (FBGEMM on x86)
        out["quantized_engine"] = torch.backends.quantized.engine
    return out


def kept(ids: list[str], gold: set[str], keep: int) -> tuple[bool, float]:
    """(a gold chunk among the first 4, the share of the gold chunks among the first `keep`)."""
    return any(c in gold for c in ids[:4]), len(gold & set(ids[:keep])) / len(gold)


def measure(reranker, questions, candidates, gold, keep: int, weights: list[float]) -> dict[float, dict]:
    """Per fusion weight: the cut's time per question (one scoring, whatever the weights) and what it keeps."""
    seconds, tokens = [], []
    first4 = {w: [] for w in weights}
    recall = {w: [] for w in weights}
    # an ONNX reranker's tokenizer (a k-fold one's: its loaded fold model's), to count what a pair holds
    tokenizer = getattr(reranker, "tokenizer", None) or next(
        (getattr(m, "tokenizer", None) for m in getattr(reranker, "_models", {}).values()), None)
    for q in tqdm(questions, desc=reranker.name[:40], unit="q"):
        chunks = candidates[q.id]
        started = time.perf_counter()
        scores = reranker.score(q.query, [c.text for c in chunks])
        seconds.append(time.perf_counter() - started)
        for w in weights:
            reranked, _ = rerank(Scored(scores), q.query, chunks, keep, w)
            hit, share = kept([c.chunk_id for c in reranked], gold[q.id], keep)
            first4[w].append(hit)
            recall[w].append(share)
        if tokenizer is not None:
            tokens.append(np.mean([len(e.ids) for e in tokenizer.encode_batch([(q.query, c.text) for c in chunks])]))
    timing = {"ms_p50": round(1000 * float(np.median(seconds)), 1),
              "ms_p95": round(1000 * float(np.percentile(seconds, 95)), 1),
              "tokens_per_pair": round(float(np.mean(tokens)), 1) if tokens else None}
    return {w: {**timing, "weight": w, "gold_in_first_4": round(float(np.mean(first4[w])), 4),
                "gold_share_in_first_10": round(float(np.mean(recall[w])), 4)} for w in weights}


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reranker", required=True, help="a reranker spec, as --reranker takes it")
    parser.add_argument("--tokens", default="512,256,128",
                        help="pair cuts to measure, comma-separated; none: the passages whole (no pair limit)")
    parser.add_argument("--focus", default="plain",
                        help="how a passage longer than the cut is read, comma-separated: plain (its start), "
                             "focused (its excerpt holding the most of the question: --rerank-focus)")
    parser.add_argument("--corpus", default="multihop-rag")
    parser.add_argument("--questions", default=str(DEFAULT_QUESTIONS))
    parser.add_argument("--per-type", type=int, help="only the first N questions of each type")
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--keep", type=int, default=10)
    parser.add_argument("--weights", default="1,0.5",
                        help="reranker weights fused with the search's score (1: its order alone), comma-separated")
    parser.add_argument("--isa", default="native",
                        help=f"code paths to measure under, comma-separated: {', '.join(HELD_TO)}")
    parser.add_argument("--cache-dir", type=Path, help="the cache the reranker reads (prepared sentences)")
    parser.add_argument("--precision", default="auto", choices=PRECISIONS,
                        help="a torch cross-encoder's number format (auto: bfloat16 where this CPU runs it fast; "
                             "held to fewer extensions, float32)")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.json")
    parser.add_argument("--measure-under", help=argparse.SUPPRESS)   # the child process of one --isa ...
    parser.add_argument("--rows-to", type=Path, help=argparse.SUPPRESS)   # ... writes its rows there
    args = parser.parse_args(argv)
    if unknown := [f for f in args.focus.split(",") if f not in ("plain", "focused")]:
        parser.error(f"--focus: unknown {', '.join(unknown)} (known: plain, focused)")
    if unknown := [i for i in args.isa.split(",") if i not in HELD_TO]:
        parser.error(f"--isa: unknown {', '.join(unknown)} (known: {', '.join(HELD_TO)})")
    return args


def measure_here(args: argparse.Namespace) -> dict:
    """Every cut's rows under this process's code paths."""
    cuts = [None if t == "none" else int(t) for t in args.tokens.split(",")]
    weights = [float(w) for w in args.weights.split(",")]
    questions = load_questions(args.questions, per_type=args.per_type)
    gold, candidates = filtered_hybrid_candidates(args.corpus, questions, args.candidates)
    scored = [q for q in questions if gold.get(q.id) and candidates[q.id]]
    gold = {q.id: set(gold[q.id]) for q in scored}
    in_search_order = [kept([c.chunk_id for c in candidates[q.id]], gold[q.id], args.keep) for q in scored]
    rows = {"search order (no reranker)": {
        "ms_p50": 0.0, "ms_p95": 0.0, "tokens_per_pair": None,
        "gold_in_first_4": round(float(np.mean([hit for hit, _ in in_search_order])), 4),
        "gold_share_in_first_10": round(float(np.mean([share for _, share in in_search_order])), 4)}}
    # held to AVX2, auto scores in float32, as on a CPU without bf16 (resolved's fast_bf16 sees the switches)
    held = args.measure_under != "native"
    if held and cpuid_is_held() and "AVX512F" in extensions_seen():
        raise SystemExit(f"error: --isa {args.measure_under}: bench/cpuid_avx2.c is loaded, yet CPUID still "
                         "reports AVX512F to this process")
    names = []
    for cut in cuts:
        for focus in args.focus.split(","):
            if cut is None and focus == "focused":
                continue    # whole passages have nothing to focus
            reranker = load_reranker(args.reranker, args.cache_dir, precision=args.precision, max_length=cut,
                                     focus=focus == "focused")
            reranker.score(scored[0].query, [c.text for c in candidates[scored[0].id]])   # loads its fold models
            if held and "onnxruntime" in sys.modules and not cpuid_is_held():
                raise SystemExit(f"error: --isa {args.measure_under}: {args.reranker} runs on ONNX Runtime, which "
                                 "picks its kernels from CPUID alone, and CPUID cannot be held here: "
                                 f"{os.environ.get('MHGRAPH_CPUID_UNHELD', 'unknown why')}")
            names.append(reranker.name)
            label = "whole passages" if cut is None else f"{cut}-token pairs" + (", focused" if focus == "focused"
                                                                                 else "")
            for w, row in measure(reranker, scored, candidates, gold, args.keep, weights).items():
                rows[f"{label}, weight {w:g}"] = row
    # each cut's reranker names its cut: the record names them all
    return {"name": "; ".join(dict.fromkeys(names)), "scored": len(scored), "weights": weights, "rows": rows,
            "code_paths": {**code_paths(),
                           # only a cross-encoder (one with a pair cut) has a precision
                           "cross_encoder_precision": None if cuts == [None] else resolved(args.precision, "cpu")}}


def measure_under(isa: str, argv: list[str]) -> dict:
    """measure_here in a process of its own, its switches set before any library loads."""
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES} | HELD_TO[isa]
    with tempfile.TemporaryDirectory() as folder:
        if isa != "native":
            library, why = cpuid_held_library(Path(folder))
            if library is None:
                env["MHGRAPH_CPUID_UNHELD"] = why
            else:
                env["LD_PRELOAD"] = " ".join(filter(None, [str(library), env.get("LD_PRELOAD")]))
        rows = Path(folder) / "rows.json"
        done = subprocess.run([sys.executable, __file__, *argv, "--measure-under", isa, "--rows-to", str(rows)],
                              env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(done.returncode)
        return json.loads(rows.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    argv = list(argv if argv is not None else sys.argv[1:])
    args = parse(argv)
    if args.measure_under:
        args.rows_to.write_text(json.dumps(measure_here(args)), encoding="utf-8")
        return 0
    isas = args.isa.split(",")
    # the held code paths first: an ONNX reranker, which cannot be held, is refused before any measure
    first_held = sorted(isas, key=lambda isa: isa == "native")
    measured = {isa: measure_under(isa, argv) for isa in first_held}
    measured = {isa: measured[isa] for isa in isas}
    first = measured[isas[0]]
    name = first["name"]
    rows = {}
    for isa, m in measured.items():
        for label, row in m["rows"].items():
            if label.startswith("search order") and label in rows:
                continue
            rows[label if label.startswith("search order") or len(isas) == 1 else f"{label}, {isa}"] = {
                **row, "isa": None if label.startswith("search order") else isa}
    info = {**machine(), "vector_extensions": vector_extensions()}
    command = " ".join(["python bench/rerank_cost.py", *argv])
    record = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%MZ"), "machine": info, "versions": versions(),
              "questions": split_label(args.questions), "scored": first["scored"], "per_type": args.per_type,
              "reranker": args.reranker, "reranker_name": name, "precision": args.precision,
              "candidates": args.candidates, "keep": args.keep,
              "weights": first["weights"], "command": command, "rows": rows,
              "code_paths": {isa: m["code_paths"] for isa, m in measured.items()},
              "measures": "gold-chunk measures (not the official rule): gold_in_first_4 = a gold chunk among the "
                          "first 4; gold_share_in_first_10 = share of the question's gold chunks in the first 10"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    lines = [f"# Reranking cost per question: {args.reranker}", "",
             f"- questions: {record['questions']}"
             f"{f', the first {args.per_type} of each type' if args.per_type else ''}; {first['scored']} with gold "
             "chunks",
             f"- date (UTC): {record['date']}; machine: {describe(info)}; vector extensions: "
             f"{', '.join(info['vector_extensions']) or 'none found'}; CPU only, nothing else running",
             *(f"- code paths, {isa}: {describe_paths(m['code_paths'])}" for isa, m in measured.items()),
             f"- reranker: {name}",
             f"- candidates: metarag, rules filters, hybrid search, K = {args.candidates}; the reranker keeps "
             f"K' = {args.keep}; weight 1: the reranker's order alone, below 1: fused with the search's score, each "
             "standardised (the time is one scoring, whatever the weight)",
             f"- command: {command}", "",
             "Gold-chunk measures, not the official rule: they compare the cuts with one another. The official "
             "figures of a pipeline with this reranker are in the compose records.", ""]
    lines += table(["pairs", "tokens per pair (mean)", "ms per question p50", "p95", "gold chunk in first 4",
                    "share of gold chunks in first 10"],
                   [[label, "-" if r["tokens_per_pair"] is None else f"{r['tokens_per_pair']:.0f}",
                     f"{r['ms_p50']:.0f}", f"{r['ms_p95']:.0f}", f"{r['gold_in_first_4']:.3f}",
                     f"{r['gold_share_in_first_10']:.3f}"] for label, r in rows.items()])
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


def describe_paths(paths: dict) -> str:
    """One line: the switches set and what torch and the BLAS libraries report."""
    held = [f"{k}={v}" for k in SWITCHES if (v := paths.get(k))]
    held += ["CPUID held to AVX2 (bench/cpuid_avx2.c)"] if paths.get("cpuid_held") else []
    seen = [f"CPUID reports {'/'.join(paths['cpuid_reports']) or 'none'} of AVX2/AVX512F/AVX512_CLX/AVX512_SPR"
            ] if "cpuid_reports" in paths else []
    seen += [f"torch CPU capability {paths['torch_cpu_capability']}"] if paths.get("torch_cpu_capability") else []
    seen += [f"BLAS {b}" for b in paths.get("blas", [])]
    seen += ["ONNX Runtime loaded"] if paths.get("onnxruntime") else []
    if paths.get("cross_encoder_precision") is not None:
        seen += [f"the cross-encoder scores in {paths['cross_encoder_precision']}"
                 + (f" (quantized engine {paths['quantized_engine']})" if paths['cross_encoder_precision'] == "int8"
                    else "")]
    return f"{' '.join(held) or 'no switch set'}; {', '.join(seen) or 'nothing reported'}"


if __name__ == "__main__":
    sys.exit(main())
