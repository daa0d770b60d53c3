"""A corpus of distinct English prose, for benchmarks that need realistic embedding
neighbourhoods before the MultiHop-RAG corpus is available: each article is the docstrings of
one Python module installed on this machine (read with `ast`, nothing imported), its source the
top-level package. Its text does not repeat, so nearest neighbours are well defined (the vector
index benchmark needs that); it is not news, so it says nothing about answer quality.

    python bench/make_prose_corpus.py --out /tmp/prose-corpus.json [--articles 609]
        [--questions-out /tmp/prose-questions.json --questions 2556]

With --questions-out it also writes questions in MultiHop-RAG's format, with the benchmark's mix
of types, to run the evaluation at benchmark scale (time, memory, traces): each has 2-4 evidence
facts, sentences taken verbatim from different articles, and its query strings together the
first words of its facts; null questions have no evidence. They measure the harness, not a
method.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import random
import re
import sysconfig
from datetime import datetime, timedelta, timezone
from pathlib import Path

# Packages with long prose docstrings; those not installed are skipped.
PACKAGES = ("torch", "transformers", "numpy", "matplotlib", "sklearn", "scipy", "neo4j", "neo4j_graphrag",
            "huggingface_hub", "click", "jinja2", "sentence_transformers", "ranx", "tqdm", "pydantic")


def module_prose(path: Path, max_words: int) -> str:
    """The module's docstrings (module, classes, functions) as paragraphs, at most max_words."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return ""
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    paragraphs, words = [], 0
    for node in nodes:
        doc = ast.get_docstring(node)
        if not doc or len(doc.split()) < 12:
            continue
        paragraphs.append(" ".join(doc.split()))
        words += len(doc.split())
        if words >= max_words:
            break
    return "\n\n".join(paragraphs)


# MultiHop-RAG's mix: 816 inference, 856 comparison, 583 temporal, 301 null of 2,556.
QUESTION_TYPES = (("inference_query", 816), ("comparison_query", 856), ("temporal_query", 583), ("null_query", 301))


def sentences(body: str) -> list[str]:
    """Sentences of 12 to 60 words, the candidates for evidence facts."""
    out = []
    for paragraph in body.split("\n\n"):
        for sentence in re.split(r"(?<=[.!?])\s+", paragraph):
            if 12 <= len(sentence.split()) <= 60:
                out.append(sentence)
    return out


def make_questions(articles: list[dict], count: int, rng: random.Random) -> list[dict]:
    total = sum(n for _, n in QUESTION_TYPES)
    facts = [(a, sentences(a["body"])) for a in articles]
    facts = [(a, f) for a, f in facts if f]
    questions = []
    for qtype, n in QUESTION_TYPES:
        for _ in range(round(count * n / total)):
            if qtype == "null_query":
                words = " ".join(rng.choice(facts)[1][0].split()[:10])
                questions.append({"query": f"What did the reports say about {words}?", "answer": "Insufficient information.",
                                  "question_type": qtype, "evidence_list": []})
                continue
            picked = rng.sample(facts, rng.choice((2, 2, 3, 4)))
            evidence = []
            for article, candidates in picked:
                evidence.append({key: article[key] for key in ("title", "author", "url", "source", "category",
                                                               "published_at")} | {"fact": rng.choice(candidates)})
            query = " and ".join(" ".join(e["fact"].split()[:8]) for e in evidence)
            questions.append({"query": f"According to the sources, how do these relate: {query}?", "answer": "Yes",
                              "question_type": qtype, "evidence_list": evidence})
    rng.shuffle(questions)
    return questions[:count]


def package_roots() -> list[tuple[str, Path]]:
    roots = [("stdlib", Path(sysconfig.get_paths()["stdlib"]))]
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            roots.append((name, Path(next(iter(spec.submodule_search_locations)))))
    return roots


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=609)
    ap.add_argument("--min-words", type=int, default=400)
    ap.add_argument("--max-words", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--questions-out", type=Path)
    ap.add_argument("--questions", type=int, default=2556)
    args = ap.parse_args()
    candidates = []
    for source, root in package_roots():
        for path in sorted(root.rglob("*.py")):
            if source == "stdlib" and ("site-packages" in path.parts or "test" in path.parts):
                continue
            body = module_prose(path, args.max_words)
            if len(body.split()) >= args.min_words:
                candidates.append((source, root, path, body))
    random.Random(args.seed).shuffle(candidates)
    start = datetime(2023, 9, 26, tzinfo=timezone.utc)
    articles = []
    for i, (source, root, path, body) in enumerate(candidates[: args.articles]):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        articles.append({"title": f"{source}: {module}", "author": None, "source": source,
                         "url": f"https://docs.invalid/{source}/{module}", "category": "software",
                         "published_at": (start + timedelta(hours=3 * i)).isoformat(), "body": body})
    args.out.write_text(json.dumps(articles, ensure_ascii=False), encoding="utf-8")
    words = sum(len(a["body"].split()) for a in articles)
    sources = sorted({a["source"] for a in articles})
    print(f"wrote {args.out}: {len(articles)} articles, {words} words, {len(sources)} sources ({', '.join(sources)})")
    if args.questions_out:
        questions = make_questions(articles, args.questions, random.Random(args.seed))
        args.questions_out.write_text(json.dumps(questions, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"wrote {args.questions_out}: {len(questions)} questions")


if __name__ == "__main__":
    main()
