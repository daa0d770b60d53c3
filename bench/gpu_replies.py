"""Answer a file of chat jobs with a GGUF model on a GPU, in batches (transformers): the device half
of bench/llm_replay.py, for when the model is too slow on this machine's CPUs (issue 25's
model-written questions: Qwen2.5-Coder-1.5B took about 34 s per request here).

    python bench/gpu_replies.py --gguf DIR/model.gguf --jobs jobs.jsonl --out replies.jsonl

A job is one JSON line: {"messages": [...], "prefill": "{\"question\": \"", "then": [FOLLOW, ...]}.
The reply is the prefill plus what the model writes after it (greedy decoding), so a JSON reply
starts as the JSON-schema output of an OpenAI-compatible server would. A FOLLOW is a job whose
messages hold the placeholder "\u0000VALUE\u0000"; it is asked once the first reply's `field` is
read, with that value, whitespace collapsed, put in place (how mhgraph's MHTS steps chain compose →
question and decompose, and a written question → the answerability check). Every request answered
goes to --out as {"messages", "reply", "seconds"}; that file is llm_replay.py's table.

Needs torch, transformers and gguf only (not mhgraph), so it runs on a bare GPU machine.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

PLACEHOLDER = "\u0000VALUE\u0000"


def chatml(messages: list[dict[str, str]]) -> str:
    """Qwen2.5's chat template (ChatML), for a tokenizer that came without one."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + "<|im_start|>assistant\n"


def _load_repairs():
    """mhgraph.llm.jsonrepair by its path: the generator's own repairs, without importing mhgraph (and
    pydantic) on a bare GPU machine."""
    path = Path(__file__).resolve().parents[1] / "mhgraph" / "llm" / "jsonrepair.py"
    spec = importlib.util.spec_from_file_location("jsonrepair", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.candidates


candidates = _load_repairs()


def read_value(reply: str, field: str) -> str | None:
    """`field` of the reply as the generator reads it (the first repair that parses and holds the
    field as a string), whitespace collapsed; None when it has none."""
    for text in candidates(reply):
        try:
            value = json.loads(text)[field]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(value, str):
            return " ".join(value.split()) or None
    return None


def fill(job: dict[str, Any], value: str) -> dict[str, Any]:
    messages = [{**m, "content": m["content"].replace(PLACEHOLDER, value)} for m in job["messages"]]
    return {**job, "messages": messages}


class Generator:
    def __init__(self, gguf: Path, batch: int, max_new_tokens: int, device: str = "cuda",
                 tokenizer: Path | None = None) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        t = time.perf_counter()
        # a tokenizer saved beside the GGUF loads in a second; converting the GGUF's takes about a minute
        self.tok = (AutoTokenizer.from_pretrained(str(tokenizer)) if tokenizer else
                    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name))
        self.tok.padding_side = "left"
        if self.tok.pad_token is None:
            self.tok.pad_token = self.tok.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                          dtype=torch.bfloat16).to(device).eval()
        self.device = device
        self.load_seconds = time.perf_counter() - t
        self.batch, self.max_new_tokens = batch, max_new_tokens
        self.cut = 0
        # Qwen's chat turns end at <|im_end|>; the GGUF's eos may be <|endoftext|>
        self.stop = [i for i in {self.tok.eos_token_id, self.tok.convert_tokens_to_ids("<|im_end|>")}
                     if isinstance(i, int) and i >= 0]

    def prompt(self, job: dict[str, Any]) -> str:
        if getattr(self.tok, "chat_template", None):
            text = self.tok.apply_chat_template(job["messages"], add_generation_prompt=True, tokenize=False)
        else:
            text = chatml(job["messages"])
        return text + job.get("prefill", "")

    def run(self, jobs: list[dict[str, Any]], deadline: float) -> list[str | None]:
        """Replies in the jobs' order; None for the jobs no batch reached before `deadline`
        (time.monotonic()) and for replies cut at max_new_tokens (counted in self.cut: the generator
        would read a cut reply as damaged JSON, or repair it into something the model did not
        finish). A job's `priority` (lower first) orders the batches, then its length."""
        torch = self.torch
        prompts = [self.prompt(j) for j in jobs]
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].get("priority", 0), len(prompts[i])))
        replies: list[str | None] = [None] * len(jobs)
        for start in range(0, len(order), self.batch):
            if time.monotonic() > deadline:
                break
            rows = order[start:start + self.batch]
            enc = self.tok([prompts[i] for i in rows], return_tensors="pt", padding=True).to(self.device)
            with torch.inference_mode():
                out = self.model.generate(**enc, do_sample=False, max_new_tokens=self.max_new_tokens,
                                          eos_token_id=self.stop, pad_token_id=self.tok.pad_token_id)
            new = out[:, enc["input_ids"].shape[1]:]
            # a row that stopped holds its stop token (then pads); one stopped by max_new_tokens holds none
            stopped = torch.isin(new, torch.tensor(self.stop, device=new.device)).any(dim=1).tolist()
            for i, ids, done in zip(rows, new, stopped):
                if not done:
                    self.cut += 1       # left out, as no reply
                    continue
                replies[i] = jobs[i].get("prefill", "") + self.tok.decode(ids, skip_special_tokens=True)
        return replies


def answer_jobs(jobs: list[dict[str, Any]], run: Callable[[list[dict[str, Any]], float], list[str | None]],
                deadline: float, out: TextIO) -> int:
    """Answer the jobs, then their follow-ups, level by level; every request answered goes to `out`
    as a JSON line. `run` is Generator.run (or any function with its contract). Returns the count."""
    answered, level = 0, 0
    while jobs:
        t = time.perf_counter()
        replies = run(jobs, deadline)
        seconds = time.perf_counter() - t
        done = sum(r is not None for r in replies)
        nxt = []
        for job, reply in zip(jobs, replies):
            if reply is None:
                continue
            out.write(json.dumps({"messages": job["messages"], "reply": reply,
                                  "seconds": round(seconds / max(done, 1), 4)}) + "\n")
            for follow in job.get("then", []):
                value = read_value(reply, follow["field"])
                if value is not None:
                    nxt.append(fill(follow, value))
        answered += done
        print(f"level {level}: {done} of {len(jobs)} requests in {seconds:.1f} s; {len(nxt)} follow-ups", flush=True)
        jobs, level = nxt, level + 1
    return answered


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", type=Path, required=True)
    ap.add_argument("--jobs", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tokenizer", type=Path, help="a saved tokenizer folder (else the GGUF's)")
    ap.add_argument("--seconds", type=float, default=0, help="start no batch after this many seconds (0: no limit)")
    ap.add_argument("--limit", type=int, default=0, help="first N jobs only (a trial)")
    args = ap.parse_args()
    with (gzip.open if args.jobs.suffix == ".gz" else open)(args.jobs, "rt") as lines:
        jobs = [json.loads(line) for line in lines if line.strip()]
    if args.limit:
        jobs = jobs[:args.limit]
    started = time.monotonic()
    deadline = started + args.seconds if args.seconds else float("inf")
    gen = Generator(args.gguf, args.batch, args.max_new_tokens, args.device, args.tokenizer)
    print(f"model loaded in {gen.load_seconds:.1f} s; {len(jobs)} jobs", flush=True)
    with (gzip.open if args.out.suffix == ".gz" else open)(args.out, "wt") as out:
        answered = answer_jobs(jobs, gen.run, deadline, out)
    print(f"{answered} requests answered; {gen.cut} replies cut at {args.max_new_tokens} tokens left out", flush=True)


if __name__ == "__main__":
    main()
