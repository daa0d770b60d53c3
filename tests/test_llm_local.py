"""The local backend on real prompts (the packaged Qwen2.5-Coder GGUF through llama.cpp), and the
openai backend against a real OpenAI-compatible server: llama.cpp's own, over the same model.
Needs the local-llm extra, which scripts/test.sh installs (scripts/build-llama-cpp.sh)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from pydantic import BaseModel

from mhgraph.config import load_settings
from mhgraph.llm import LLM, load_llm
from mhgraph.llm.cache import ResponseCache
from mhgraph.llm.endpoint import OpenAIChat
from mhgraph.llm.local import LlamaCppChat
from mhgraph.llm.packaged import DEFAULT_LOCAL_MODEL, PACKAGED_GGUF

EVIDENCE = ("Excerpt [1] (TechCrunch, 2023-11-20): Veltrix Robotics recalled 62,000 laundry robots over a battery "
            "fire risk.\nExcerpt [2] (The Verge, 2023-11-22): Shares of Veltrix Robotics fell 18 per cent.")
QUESTION = [{"role": "system", "content": "Answer with the company name only."},
            {"role": "user", "content": f"{EVIDENCE}\n\nWhich company recalled laundry robots?"}]


class Company(BaseModel):
    company: str
    excerpt: int


@pytest.fixture(scope="module")
def model_path() -> Path:
    # the cache of the user running the tests: joining 1.1 GB of parts once is enough
    return PACKAGED_GGUF[DEFAULT_LOCAL_MODEL].assemble(load_settings().cache_dir)


@pytest.fixture(scope="module")
def local(model_path: Path) -> LlamaCppChat:
    return LlamaCppChat(model_path, context=2048, threads=2)


def test_packaged_model_is_joined_from_its_parts_and_checked(model_path: Path) -> None:
    packaged = PACKAGED_GGUF[DEFAULT_LOCAL_MODEL]
    assert model_path.stat().st_size == packaged.size
    assert model_path.parent.name == packaged.sha256[:16]


def test_local_backend_answers_a_real_prompt(local: LlamaCppChat, tmp_path: Path) -> None:
    llm = LLM(local, ResponseCache(tmp_path / "c.sqlite"))
    reply = llm.complete(QUESTION, max_tokens=12)
    assert "veltrix" in reply.text.lower()
    assert reply.prompt_tokens and reply.prompt_tokens > 50 and reply.completion_tokens
    assert reply.seconds > 0 and reply.prompt_seconds is not None and 0 < reply.prompt_seconds <= reply.seconds
    assert llm.label == f"local:{DEFAULT_LOCAL_MODEL}"
    assert llm.chat(QUESTION, max_tokens=12) == reply.text and llm.usage.cache_hits == 1 and llm.usage.calls == 1


def test_local_json_is_grammar_constrained(local: LlamaCppChat) -> None:
    llm = LLM(local)
    answer = llm.json([*QUESTION[:1], {"role": "user", "content": QUESTION[1]["content"] +
                                       " Reply as JSON with the company and the excerpt number."}], Company,
                      max_tokens=40)
    assert "veltrix" in answer.company.lower() and answer.excerpt in (1, 2)
    assert llm.usage.retries == 0 and llm.usage.failures == 0


def test_local_stream(local: LlamaCppChat) -> None:
    pieces = list(LLM(local).stream(QUESTION, max_tokens=12))
    assert len(pieces) > 1 and "veltrix" in "".join(pieces).lower()


def test_local_backend_from_settings(model_path: Path, tmp_path: Path) -> None:
    settings = load_settings({"llm_backend": "local", "llm_model_path": model_path, "llm_context": 1024,
                              "cache_dir": tmp_path})
    llm = load_llm(settings)
    assert llm is not None and llm.backend.backend == "local" and llm.backend.path == model_path
    missing = load_settings({"llm_backend": "local", "llm_model_path": tmp_path / "nothing.gguf"})
    with pytest.raises(Exception, match=r"nothing.gguf: no such model file \(llm_model_path\)"):
        load_llm(missing)


@pytest.fixture(scope="module")
def llama_server(model_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{port}.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", "qwen-coder",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2).read()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"llama.cpp's server did not start (log: {log.name})")
            time.sleep(0.5)
    yield url
    process.terminate()
    process.wait(timeout=30)
    log.close()


def test_openai_backend_against_llama_cpp_server(llama_server: str) -> None:
    llm = LLM(OpenAIChat("qwen-coder", base_url=llama_server, timeout=300, max_retries=0))
    assert "veltrix" in llm.chat(QUESTION, max_tokens=12).lower()
    assert llm.usage.prompt_tokens > 50 and llm.usage.completion_tokens > 0
    answer = llm.json([*QUESTION[:1], {"role": "user", "content": QUESTION[1]["content"] +
                                       " Reply as JSON with the company and the excerpt number."}], Company,
                      max_tokens=40)
    assert "veltrix" in answer.company.lower()
    assert "veltrix" in "".join(llm.stream(QUESTION, max_tokens=12)).lower()
