"""Write a run's gold-fact coverage (both rules) as a Markdown file.

    python bench/gold_coverage.py runs/<run>/report.json bench/results/gold-coverage-NAME.md NAME

The coverage is computed by `mhgraph eval` (eval/gold.py for ours, eval/official.py for the
official rule, when the run scored with it); this only renders it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    report, out, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    summary = json.loads(report.read_text(encoding="utf-8"))
    coverage = summary["gold_coverage"]
    lines = [
        f"# Gold-fact coverage on {name}", "",
        f"Chunks of {summary['chunk_size']}/{summary['chunk_overlap']} tokens ({summary['embedding_model']}'s "
        f"tokenizer), corpus '{summary.get('corpus', name)}'; questions: {summary['questions_file']}; from run "
        f"{summary['run_id']}. Our rule matches a fact whole in a chunk (normalised containment) or, failing that, "
        "the chunks its span overlaps; the official rule only whole in one chunk, with spaces and newlines removed "
        "and nothing else.", "",
        "```", *coverage["lines"], "```", "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"written {out}")


if __name__ == "__main__":
    main()
