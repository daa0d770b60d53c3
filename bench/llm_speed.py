"""Speed of the local LLM on this machine: prompt processing and generation apart, in tokens per
second, for prompts the size of answer prompts (K = 4 and 10 chunks of 256 tokens), per thread
count. Counts and times come from llama.cpp's own counters, so tokenizer and timing agree.

    python bench/llm_speed.py [--model-path FILE] [--threads 1 2] [--repeats 2]

Writes bench/results/llm-speed.json and .md. Run it on a quiet machine: other load halves the
figures (see ../shared/docs/offline-models.md)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from environment import machine  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop-rag" / "corpus.json"
PROMPT_TOKENS = (300, 1200, 3000)     # a question alone; K = 4 and K = 10 chunks of 256 tokens with headers
GENERATE = 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-path", type=Path, help="GGUF file (default: the packaged default model)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "llm-speed.json")
    args = parser.parse_args()

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    from mhgraph.config import load_settings
    from mhgraph.llm.packaged import DEFAULT_LOCAL_MODEL, PACKAGED_GGUF

    path = args.model_path or PACKAGED_GGUF[DEFAULT_LOCAL_MODEL].assemble(load_settings().cache_dir)
    text = " ".join(a["body"] for a in json.loads(CORPUS.read_text(encoding="utf-8"))[:40])
    rows = []
    for threads in args.threads:
        started = time.perf_counter()
        llama = llama_cpp.Llama(model_path=str(path), n_ctx=4096, n_threads=threads, verbose=False)
        load_s = time.perf_counter() - started
        tokens = llama.tokenize(text.encode(), add_bos=False)
        for size in PROMPT_TOKENS:
            for repeat in range(args.repeats):
                # a different slice each time: no prompt prefix is reused from llama.cpp's cache
                offset = (repeat + 1) * 5000 + size
                prompt = llama.detokenize(tokens[offset:offset + size]).decode(errors="ignore")
                llama.reset()
                llama_cpp.llama_perf_context_reset(llama.ctx)
                t0 = time.perf_counter()
                llama.create_completion(prompt + "\nSummary:", max_tokens=GENERATE, temperature=0.0)
                wall = time.perf_counter() - t0
                perf = llama_cpp.llama_perf_context(llama.ctx)
                rows.append({"threads": threads, "prompt_tokens": perf.n_p_eval, "prompt_s": perf.t_p_eval_ms / 1000,
                             "generated_tokens": perf.n_eval, "generate_s": perf.t_eval_ms / 1000, "wall_s": wall,
                             "load_s": load_s})
                print(json.dumps(rows[-1]), flush=True)
        del llama

    summary = []
    for threads in args.threads:
        for size in PROMPT_TOKENS:
            runs = [r for r in rows if r["threads"] == threads and abs(r["prompt_tokens"] - size) <= size * 0.1 + 5]
            if not runs:
                continue
            summary.append({
                "threads": threads, "prompt_tokens": round(statistics.mean(r["prompt_tokens"] for r in runs)),
                "prompt_tokens_per_s": statistics.mean(r["prompt_tokens"] / r["prompt_s"] for r in runs),
                "generation_tokens_per_s": statistics.mean(r["generated_tokens"] / r["generate_s"] for r in runs
                                                           if r["generated_tokens"]),
                "seconds_for_prompt_and_64_tokens": statistics.mean(r["wall_s"] for r in runs),
            })
    load = os.getloadavg()
    result = {"benchmark": "llm-speed", "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "model": path.name, "runtime": f"llama-cpp-python {llama_cpp.__version__}", "machine": machine(),
              "load_average_after": [round(x, 2) for x in load], "command": "python " + " ".join(sys.argv),
              "summary": summary, "runs": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    lines = [f"# Local LLM speed: {path.name}", "",
             f"{result['date_utc']}, {result['machine']['cpu']} ({result['machine']['cores']} cores), "
             f"{result['runtime']}; `{result['command']}`; load average after {result['load_average_after']}.", "",
             "| threads | prompt tokens | prompt tokens/s | generation tokens/s | s for prompt + 64 tokens |",
             "|---:|---:|---:|---:|---:|"]
    lines += [f"| {s['threads']} | {s['prompt_tokens']} | {s['prompt_tokens_per_s']:.1f} | "
              f"{s['generation_tokens_per_s']:.1f} | {s['seconds_for_prompt_and_64_tokens']:.1f} |" for s in summary]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
