"""How a run's top chunks spread over documents: a section added to a compose record (.md and .json).

Per run folder (mhgraph eval's results.json): the mean number of documents among the top K chunks
(a chunk's document known by its title), the official Recall@K by the number of facts a question
cites, and the questions with a gold chunk (our rule) that is the third or later chunk of its
document in the top K: the chunks a cap of two per document (compose's diversify stage) moves out.
  python bench/document_spread.py --md RECORD.md --json RECORD.json RUN [RUN ...]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from statistics import fmean

from markdown import f, table

K = 10
CAP = 2


def spread(run: Path) -> dict:
    rows = json.loads((run / "results.json").read_text())
    rows = rows["questions"] if isinstance(rows, dict) else rows
    documents, past_cap, scored = [], 0, 0
    by_facts: dict[int, list[float]] = defaultdict(list)
    for r in rows:
        official = r.get("official") or {}
        if not official.get("facts"):
            continue
        scored += 1
        top = [c for h in r["hops"] for c in h["chunks"]][:K]
        documents.append(len({c["title"] for c in top}))
        by_facts[official["facts"]].append(official[f"recall@{K}"])
        seen: dict[str, int] = defaultdict(int)
        beyond = False
        for c in top:
            seen[c["title"]] += 1
            beyond |= seen[c["title"]] > CAP and c["gold"]
        past_cap += beyond
    return {"questions": scored, "documents_mean": round(fmean(documents), 2),
            f"recall@{K}_by_facts": {n: {"questions": len(v), "recall": round(fmean(v), 4)}
                                     for n, v in sorted(by_facts.items())},
            "gold_past_cap": past_cap, "cap": CAP}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--md", required=True)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    found = {Path(r).name: spread(Path(r)) for r in args.runs}
    facts = sorted({n for s in found.values() for n in s[f"recall@{K}_by_facts"]})
    lines = ["", f"## How the top {K} spread over documents", "",
             (f"Documents: the mean number of documents among a question's top {K} chunks (known by title). "
             f"Recall@{K} by facts cited: official rule. Gold past {CAP}: questions with a gold chunk (our rule) "
             f"that is the third or later chunk of its document in the top {K}, which a cap of {CAP} per "
             "document moves out."), ""]
    lines += table(["run", "documents", *(f"Recall@{K}, {n} facts" for n in facts), f"gold past {CAP}"],
                   [[f"`{run}`", f"{s['documents_mean']:.2f}",
                     *(f(s[f"recall@{K}_by_facts"][n]["recall"]) if n in s[f"recall@{K}_by_facts"] else "-"
                       for n in facts), f"{s['gold_past_cap']} of {s['questions']}"] for run, s in found.items()])
    with open(args.md, "a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    record = json.loads(Path(args.json).read_text())
    record["document_spread"] = found
    Path(args.json).write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
