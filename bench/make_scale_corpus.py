"""A synthetic corpus at benchmark scale, for running the ingest benchmark before the real
MultiHop-RAG corpus is available: N articles (default 609), each the bundled sample's bodies
concatenated in a rotating order until it has about --words words, with distinct titles, urls
and dates. Its text repeats, so it measures throughput and memory, never retrieval quality.

    python bench/make_scale_corpus.py --out /tmp/scale-corpus.json
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "mhgraph" / "data" / "sample" / "corpus.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=609)
    ap.add_argument("--words", type=int, default=1500)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    sample = json.loads(SAMPLE.read_text(encoding="utf-8"))
    start = datetime(2023, 9, 26, tzinfo=timezone.utc)
    articles = []
    for i in range(args.articles):
        parts, words, j = [], 0, i
        while words < args.words:
            body = sample[j % len(sample)]["body"]
            parts.append(body)
            words += len(body.split())
            j += 1
        base = sample[i % len(sample)]
        articles.append({**base, "title": f"{base['title']} (scale copy {i})", "url": f"{base['url']}?copy={i}",
                         "published_at": (start + timedelta(hours=3 * i)).isoformat(), "body": "\n\n".join(parts)})
    args.out.write_text(json.dumps(articles, ensure_ascii=False), encoding="utf-8")
    total = sum(len(a["body"].split()) for a in articles)
    print(f"wrote {args.out}: {len(articles)} articles, {total} words")


if __name__ == "__main__":
    main()
