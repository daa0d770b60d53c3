"""The claims layer's language-model path against its offline strategy, on a slice: the claim
extractor on the gold chunks of the first questions, and the target finder on the same questions.
Read-only: nothing is written to the graph.

    python bench/claims_llm.py --corpus multihop-rag [--chunks 12] [--backend local|openai] > OUT.md

Per extractor: claims per chunk, seconds per chunk, model calls, tokens and failures, and how many
of those chunks' gold facts a claim covers (the rule of bench/claims_report.py: a claim of the
fact's gold chunk holding at least half of its content words). Per target finder: targets per
question and seconds. A few chunks' claims side by side, to be read.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from environment import describe, machine
from markdown import neo4j_server, split_label, table

from mhgraph import cypher
from mhgraph.claims.extract import LLMClaimExtractor, OfflineClaimExtractor
from mhgraph.claims.targets import LLMTargetFinder, OfflineTargetFinder
from mhgraph.config import load_settings
from mhgraph.benchmark import load_questions
from mhgraph.eval.runner import gold_matcher
from mhgraph.filters.sources import SourceCatalog
from mhgraph.graph.connection import connect
from mhgraph.llm import LLMError, load_llm
from mhgraph.reasoning.text import content_words

DEFAULT_QUESTIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "multihop-rag" / "MultiHopRAG.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--questions", default=str(DEFAULT_QUESTIONS))
    parser.add_argument("--chunks", type=int, default=12, help="gold chunks to extract from (first questions first)")
    parser.add_argument("--backend", default="local", choices=["local", "openai"])
    parser.add_argument("--show", type=int, default=3, help="chunks whose claims are printed side by side")
    args = parser.parse_args(argv)
    settings = load_settings({"corpus": args.corpus, "llm_backend": args.backend})
    llm = load_llm(settings)
    questions = load_questions(args.questions)
    with connect(settings) as driver:
        matcher = gold_matcher(driver, settings.neo4j_database, args.corpus)
        catalog = SourceCatalog.from_graph(driver, settings.neo4j_database, args.corpus)
        # every chunk with its title, as a build reads them (no chunk is done by an extractor of this label)
        records, _, _ = driver.execute_query(cypher.load("claims/pending_chunks"), corpus=args.corpus,
                                             extractor="(none)", database_=settings.neo4j_database)
    chunks = {r["chunk_id"]: (r["text"], r["title"]) for r in records}
    facts: dict[str, list[str]] = {}     # chunk id -> the gold facts it holds
    asked = []                           # the questions whose gold chunks make the slice
    for q in questions:
        if len(facts) >= args.chunks:
            break
        chunk_ids = [(e.fact, c) for e in q.evidence for c in matcher.match(e.fact, e.title)]
        if not chunk_ids:
            continue
        asked.append(q)
        for fact, c in chunk_ids:
            if c in facts or len(facts) < args.chunks:
                facts.setdefault(c, []).append(fact)
    offline = OfflineClaimExtractor()
    extractors = [offline, LLMClaimExtractor(llm)]
    results, rows = {}, []
    for extractor in extractors:
        before = llm.usage.as_dict() if extractor is not offline else None
        started = time.perf_counter()
        claims, failed = {}, 0
        for c in facts:
            try:
                claims[c] = extractor.extract(*chunks[c])
            except LLMError:
                claims[c], failed = [], failed + 1
        seconds = time.perf_counter() - started
        results[extractor.label] = claims
        total = sum(len(f) for f in facts.values())
        covered = sum(any(len(set(content_words(f)) & set(content_words(k.text))) >= max(1, len(set(content_words(f))) / 2)
                          for k in claims[c]) for c, fs in facts.items() for f in fs)
        used = llm.usage.as_dict() if before is not None else None
        cost = (f"{used['calls'] - before['calls']} calls, {used['prompt_tokens'] - before['prompt_tokens']} prompt / "
                f"{used['completion_tokens'] - before['completion_tokens']} completion tokens, "
                f"{failed} chunks failed") if used else "no model"
        rows.append([extractor.label, str(len(facts)), f"{sum(map(len, claims.values())) / len(facts):.2f}",
                     f"{covered} of {total}", f"{seconds / len(facts):.1f}", cost])
    finder_rows = []
    for finder in (OfflineTargetFinder(catalog, offline.nlp), LLMTargetFinder(llm)):
        started = time.perf_counter()
        found = []
        for q in asked:
            try:
                found.append(finder.question_targets(q.query))
            except LLMError:
                found.append([])
        seconds = time.perf_counter() - started
        finder_rows.append([finder.label, str(len(asked)), f"{sum(map(len, found)) / len(asked):.1f}",
                            f"{seconds / len(asked):.2f}", "; ".join(", ".join(t) for t in found[:3])])
    lines = [f"# Claims: the language model's path beside the offline strategy, on a slice of {args.corpus}", "",
             f"- questions: {split_label(args.questions)}; the gold chunks of the first {len(asked)} questions "
             f"with gold ({len(facts)} chunks)",
             f"- model: {llm.label}; machine: {describe(machine())}, CPU only; Neo4j {neo4j_server()}",
             f"- command: python bench/claims_llm.py --corpus {args.corpus} --chunks {args.chunks} "
             f"--backend {args.backend}", "",
             "## Claim extraction", ""]
    lines += table(["extractor", "chunks", "claims per chunk", "gold facts covered", "s per chunk", "cost"], rows)
    lines += ["", "## Question targets", ""]
    lines += table(["target finder", "questions", "targets per question", "s per question",
                    "the first three questions' targets"], finder_rows)
    for c in list(facts)[:args.show]:
        lines += ["", f"### Chunk {c}", "", f"Gold facts: {' / '.join(facts[c])}", ""]
        for label, claims in results.items():
            lines += [f"*{label}*:", ""] + [f"- {k.text} (target: {k.target}; topic: {k.topic})"
                                            for k in claims[c]] + [""]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
