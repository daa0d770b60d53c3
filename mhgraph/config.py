"""Settings resolved from flags, then environment, then a config file, then defaults.

`mhgraph config` prints the result together with where each value came from.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from platformdirs import user_cache_dir, user_config_dir, user_data_dir

from mhgraph.errors import MhgraphError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"

# setting name -> environment variable read for it
ENV_VARS: dict[str, str] = {
    "neo4j_uri": "NEO4J_URI",
    "neo4j_username": "NEO4J_USERNAME",
    "neo4j_password": "NEO4J_PASSWORD",
    "neo4j_database": "NEO4J_DATABASE",
    "corpus": "MHGRAPH_CORPUS",
    "openai_base_url": "OPENAI_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "llm_model": "MHGRAPH_LLM_MODEL",
    "llm_backend": "MHGRAPH_LLM_BACKEND",
    "llm_model_path": "MHGRAPH_LLM_MODEL_PATH",
    "llm_timeout": "MHGRAPH_LLM_TIMEOUT",
    "llm_max_retries": "MHGRAPH_LLM_MAX_RETRIES",
    "llm_context": "MHGRAPH_LLM_CONTEXT",
    "llm_threads": "MHGRAPH_LLM_THREADS",
    "embedding_model": "MHGRAPH_EMBEDDING_MODEL",
    "chunk_size": "MHGRAPH_CHUNK_SIZE",
    "chunk_overlap": "MHGRAPH_CHUNK_OVERLAP",
    "embed_header": "MHGRAPH_EMBED_HEADER",
    "vector_quantization": "MHGRAPH_VECTOR_QUANTIZATION",
    "vector_search_ratio": "MHGRAPH_VECTOR_SEARCH_RATIO",
    "hybrid_ranker": "MHGRAPH_HYBRID_RANKER",
    "hybrid_alpha": "MHGRAPH_HYBRID_ALPHA",
    "filter_extractor": "MHGRAPH_FILTER_EXTRACTOR",
    "filter_mode": "MHGRAPH_FILTER_MODE",
    "metarag_candidates": "MHGRAPH_METARAG_CANDIDATES",
    "metarag_search": "MHGRAPH_METARAG_SEARCH",
    "reranker": "MHGRAPH_RERANKER",
    "rerank_weight": "MHGRAPH_RERANK_WEIGHT",
    "treehop_model": "MHGRAPH_TREEHOP_MODEL",
    "treehop_hops": "MHGRAPH_TREEHOP_HOPS",
    "treehop_redundancy_pruning": "MHGRAPH_TREEHOP_REDUNDANCY_PRUNING",
    "treehop_layer_top_k": "MHGRAPH_TREEHOP_LAYER_TOP_K",
    "treehop_branches": "MHGRAPH_TREEHOP_BRANCHES",
    "treehop_filter": "MHGRAPH_TREEHOP_FILTER",
    "ircot_max_steps": "MHGRAPH_IRCOT_MAX_STEPS",
    "ircot_max_paragraphs": "MHGRAPH_IRCOT_MAX_PARAGRAPHS",
    "ircot_paragraph_words": "MHGRAPH_IRCOT_PARAGRAPH_WORDS",
    "ircot_step_sources": "MHGRAPH_IRCOT_STEP_SOURCES",
    "decompose_sub_questions": "MHGRAPH_DECOMPOSE_SUB_QUESTIONS",
    "home": "MHGRAPH_HOME",
    "cache_dir": "MHGRAPH_CACHE_DIR",
    "bolt_port": "MHGRAPH_BOLT_PORT",
    "http_port": "MHGRAPH_HTTP_PORT",
    "heap_size": "MHGRAPH_HEAP_SIZE",
    "pagecache_size": "MHGRAPH_PAGECACHE_SIZE",
    "java": "MHGRAPH_JAVA",
}
# How the Chunk vector index stores vectors (Neo4j 2026.x `vector.quantization.type`): full
# floats, 8-bit scalars, or 1 bit per dimension with exact rescoring of an expanded candidate
# list. bench/vector_index.py measures what each costs in recall against exact search.
VECTOR_QUANTIZATIONS = ("none", "scalar", "binary")
# How `hybrid` fuses its two normalised scores, as neo4j-graphrag's HybridRetriever does: the
# larger of the two (naive), or alpha x vector + (1 - alpha) x fulltext (linear).
HYBRID_RANKERS = ("naive", "linear")
LLM_BACKENDS = ("auto", "openai", "local", "none")
# What ingest embeds above each chunk's text (mhgraph/ingest/header.py): nothing, its document's
# title, or title, source and date as MultiHop-RAG's reference pipeline (LlamaIndex) did.
EMBED_HEADERS = ("none", "title", "title+source+date")
# metarag: where its filter comes from (mhgraph/filters/extractors.py) and how Neo4j applies it
FILTER_EXTRACTORS = ("rules", "llm", "reference", "gold")
FILTER_MODES = ("index", "exact")
# metarag's candidate search inside the filter: by vector (the original) or hybrid (vector + BM25,
# fused by the linear ranker with hybrid_alpha; an mhgraph option)
METARAG_SEARCHES = ("vector", "hybrid")
SECRETS = frozenset({"neo4j_password", "openai_api_key"})
# Corpus names are stored values (always query parameters), kept to characters that need no
# quoting on a command line or in Browser's :param.
CORPUS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Settings:
    # Where the graph lives. No neo4j_uri means: the local server mhgraph installs and runs.
    neo4j_uri: str | None = None
    neo4j_username: str = "neo4j"
    neo4j_password: str | None = None
    neo4j_database: str = "neo4j"
    # Which ingested corpus ingest writes to and query/eval search (Neo4j Community has one user
    # database, so corpora share it). Unset: ingest names it after the file, query/eval take the
    # graph's only corpus.
    corpus: str | None = None
    # The language model of every LLM step (mhgraph/llm). llm_backend: openai (an OpenAI-compatible
    # endpoint: openai_base_url, openai_api_key, llm_model), local (a GGUF run in process:
    # llm_model_path, else the packaged model named by llm_model), none (each step's offline
    # strategy), or auto: openai when an endpoint or key is set, else none.
    llm_backend: str = "auto"
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    llm_model: str | None = None
    llm_model_path: Path | None = None
    llm_timeout: float = 120.0       # seconds per request (per read, while streaming)
    llm_max_retries: int = 3         # connection errors, timeouts, 429 and 5xx, with backoff
    llm_context: int = 8192          # local: context tokens (10 chunks of 256 tokens and the prompt fit)
    llm_threads: int = 0             # local: 0 = every core
    # Ingest
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    chunk_size: int = 256
    chunk_overlap: int = 32
    # none | title | title+source+date (EMBED_HEADERS): metadata embedded with each chunk; the
    # stored text stays the chunk's own
    embed_header: str = "none"
    # none | scalar | binary: see VECTOR_QUANTIZATIONS
    vector_quantization: str = "none"
    # Retrieval asks the vector index for top_k x this many neighbours and keeps the best top_k
    # (neo4j-graphrag's effective_search_ratio): HNSW searches as wide as the number asked for.
    vector_search_ratio: int = 10
    # hybrid: naive | linear (HYBRID_RANKERS), and the vector weight of the linear ranker
    hybrid_ranker: str = "naive"
    hybrid_alpha: float = 0.5
    # metarag: filter extractor (FILTER_EXTRACTORS), filter mode (index: in the vector index,
    # exact: pre-filtered exact search), K candidates searched, and the reranker that keeps the best
    # K' of them (a cross-encoder name or path, nanoranker, bi-encoder:MODEL; unset: no reranking)
    filter_extractor: str = "rules"
    filter_mode: str = "index"
    metarag_candidates: int = 20
    metarag_search: str = "vector"
    reranker: str | None = None
    # the reranker's weight when its scores are fused with the search's (each standardised per
    # question); 1: the reranker's order alone, as the original method ranks; unset: the weight the
    # reranker's own description gives (the packaged cross-encoder's, measured k-fold), else 1
    rerank_weight: float | None = None
    # treehop: the model (a checkpoint or k-fold folder from 'mhgraph treehop train'; unset: the
    # packaged one, for all-MiniLM-L6-v2), the hops, its two stop rules (retrieval/treehop.py) and
    # the new branches layer-wise top-k keeps per hop (None: K, as in the paper), and whether
    # metarag's filter (filter_extractor) holds at every hop
    treehop_model: str | None = None
    treehop_hops: int = 2
    treehop_redundancy_pruning: bool = True
    treehop_layer_top_k: bool = True
    treehop_branches: int | None = None
    treehop_filter: bool = False
    # ircot: reasoning steps after BM25's first search, paragraphs held at most (the original's 8
    # and 15), and the words of each paragraph the model is shown (None: all of it; a slow local
    # model reads less); decompose: sub-questions N (3, 4 and 5 reported)
    ircot_max_steps: int = 8
    ircot_max_paragraphs: int = 15
    ircot_paragraph_words: int | None = None
    # ircot: a step whose thought names outlets searches only their chunks (an mhgraph addition;
    # false reproduces the original method)
    ircot_step_sources: bool = True
    decompose_sub_questions: int = 3
    # The local server
    home: Path = field(default_factory=lambda: Path(user_data_dir("mhgraph")) / "neo4j")
    cache_dir: Path = field(default_factory=lambda: Path(user_cache_dir("mhgraph")))
    bolt_port: int = 7687
    http_port: int = 7474
    heap_size: str = "1g"
    pagecache_size: str = "512m"
    java: str | None = None
    # setting name -> "flag" | "env" | "file" | "default"
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def uses_local_server(self) -> bool:
        return self.neo4j_uri is None

    @property
    def uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.bolt_port}"

    def resolved(self) -> dict[str, Any]:
        """Every setting with its value, secrets masked."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "origins":
                continue
            value = getattr(self, f.name)
            if f.name in SECRETS and value:
                value = mask(str(value))
            out[f.name] = str(value) if isinstance(value, Path) else value
        return out


def mask(secret: str) -> str:
    return "********"


def default_config_path() -> Path:
    """$MHGRAPH_CONFIG, else ./mhgraph.toml if present, else the user config dir."""
    if env := os.environ.get("MHGRAPH_CONFIG"):
        return Path(env)
    local = Path("mhgraph.toml")
    if local.is_file():
        return local
    return Path(user_config_dir("mhgraph")) / "config.toml"


def _read_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MhgraphError(f"{path}: invalid TOML config: {exc}") from exc
    known = {f.name for f in dataclasses.fields(Settings)} - {"origins"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise MhgraphError(f"{path}: unknown setting '{unknown[0]}' (known: {', '.join(sorted(known))})")
    return data


def _coerce(name: str, value: Any, origin: str) -> Any:
    ftype = {f.name: f.type for f in dataclasses.fields(Settings)}[name]
    try:
        if ftype == "int":
            return int(value)
        if ftype == "int | None":
            return None if value in ("", None) else int(value)
        if ftype == "float":
            return float(value)
        if ftype == "float | None":
            return None if value in ("", None) else float(value)
        if ftype == "bool":
            if isinstance(value, bool):
                return value
            if str(value).strip().lower() in ("1", "true", "yes", "on"):
                return True
            if str(value).strip().lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if ftype in ("Path", "Path | None"):
            return Path(str(value)).expanduser()
    except (TypeError, ValueError) as exc:
        expected = {"int": "an integer", "int | None": "an integer", "bool": "true or false"}.get(ftype, "a number")
        raise MhgraphError(f"setting '{name}' from {origin}: expected {expected}, got {value!r}") from exc
    return None if value in ("", None) else str(value)


def load_settings(flags: Mapping[str, Any] | None = None, config_path: Path | None = None) -> Settings:
    """Resolve settings: flags > environment > config file > defaults."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    explicit = config_path is not None or bool(os.environ.get("MHGRAPH_CONFIG"))
    path = config_path or default_config_path()
    if explicit and not path.is_file():
        raise MhgraphError(f"{path}: config file not found")
    file_values = _read_config_file(path)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for f in dataclasses.fields(Settings):
        name = f.name
        if name == "origins":
            continue
        env_name = ENV_VARS.get(name)
        if name in flags:
            values[name], origins[name] = _coerce(name, flags[name], "flag"), "flag"
        elif env_name and os.environ.get(env_name):
            values[name], origins[name] = _coerce(name, os.environ[env_name], f"${env_name}"), "env"
        elif name in file_values:
            values[name], origins[name] = _coerce(name, file_values[name], str(path)), "file"
        else:
            origins[name] = "default"
    if "llm_backend" in values:
        values["llm_backend"] = values["llm_backend"].lower()
    if "vector_quantization" in values:
        values["vector_quantization"] = values["vector_quantization"].lower()
    settings = Settings(**values, origins=origins)

    def where(name: str) -> str:  # how an error names the origin of a setting's value
        return {"file": str(path), "env": f"${ENV_VARS[name]}"}.get(origins[name], origins[name])

    if settings.vector_quantization not in VECTOR_QUANTIZATIONS:
        raise MhgraphError(f"setting 'vector_quantization' from {where('vector_quantization')}: expected one of "
                           f"{', '.join(VECTOR_QUANTIZATIONS)}, got {settings.vector_quantization!r}")
    if settings.llm_backend not in LLM_BACKENDS:
        raise MhgraphError(f"setting 'llm_backend' from {where('llm_backend')}: expected one of "
                           f"{', '.join(LLM_BACKENDS)}, got {settings.llm_backend!r}")
    for name, allowed in (("filter_extractor", FILTER_EXTRACTORS), ("filter_mode", FILTER_MODES),
                          ("metarag_search", METARAG_SEARCHES), ("embed_header", EMBED_HEADERS)):
        if getattr(settings, name) not in allowed:
            raise MhgraphError(f"setting '{name}' from {where(name)}: expected one of {', '.join(allowed)}, "
                               f"got {getattr(settings, name)!r}")
    if settings.metarag_candidates < 1:
        raise MhgraphError(f"setting 'metarag_candidates' from {where('metarag_candidates')}: expected at least 1, "
                           f"got {settings.metarag_candidates}")
    for name in ("treehop_hops", "treehop_branches", "ircot_max_steps", "ircot_max_paragraphs",
                 "ircot_paragraph_words", "decompose_sub_questions"):
        value = getattr(settings, name)
        if value is not None and value < 1:
            raise MhgraphError(f"setting '{name}' from {where(name)}: expected at least 1, got {value}")
    if settings.hybrid_ranker not in HYBRID_RANKERS:
        raise MhgraphError(f"setting 'hybrid_ranker' from {where('hybrid_ranker')}: expected one of "
                           f"{', '.join(HYBRID_RANKERS)}, got {settings.hybrid_ranker!r}")
    if settings.rerank_weight is not None and not 0.0 <= settings.rerank_weight <= 1.0:
        raise MhgraphError(f"setting 'rerank_weight' from {where('rerank_weight')}: expected a number from 0 to 1, "
                           f"got {settings.rerank_weight}")
    if not 0.0 <= settings.hybrid_alpha <= 1.0:
        raise MhgraphError(f"setting 'hybrid_alpha' from {where('hybrid_alpha')}: expected a number from 0 to 1, "
                           f"got {settings.hybrid_alpha}")
    if settings.corpus is not None:
        check_corpus_name(settings.corpus, where("corpus"))
    if settings.vector_search_ratio < 1:
        raise MhgraphError(f"vector_search_ratio must be >= 1 (got {settings.vector_search_ratio})")
    if settings.chunk_overlap >= settings.chunk_size or settings.chunk_overlap < 0:
        raise MhgraphError(
            f"chunk_overlap must be >= 0 and < chunk_size (got {settings.chunk_overlap} and {settings.chunk_size})"
        )
    return settings


def check_corpus_name(name: str, origin: str = "flag") -> str:
    """`name` if it is a valid corpus name, else a one-line error saying where it came from."""
    if not CORPUS_NAME.fullmatch(name):
        raise MhgraphError(f"setting 'corpus' from {origin}: {name!r} is not a corpus name (1-100 letters, digits, "
                           "'.', '_' or '-', starting with a letter or digit)")
    return name
