"""The LLM layer against a scripted OpenAI-compatible server on loopback: replies, usage and the
cache; retries, timeouts, HTTP errors, unknown models and unreachable endpoints as one-line
errors; JSON repaired, retried, then counted as a failure; streams, slow ones included."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from mhgraph.config import load_settings
from mhgraph.llm import LLM, LLMError, LLMOutputError, load_llm
from mhgraph.llm.cache import ResponseCache
from mhgraph.llm.endpoint import OpenAIChat
from tests.scripted_llm_server import ScriptedServer, Step

ASK = [{"role": "user", "content": "Which company did the article name?"}]


class Pick(BaseModel):
    company: str
    confidence: float
    meta: dict | None = None


@pytest.fixture
def endpoint():
    server = ScriptedServer()
    yield server
    server.close()


def chat(endpoint: ScriptedServer, *, timeout: float = 5, retries: int = 2, model: str = "scripted") -> OpenAIChat:
    return OpenAIChat(model, base_url=endpoint.base_url, timeout=timeout, max_retries=retries)


def test_reply_usage_and_parameters(endpoint: ScriptedServer) -> None:
    endpoint.script = [Step("Acme", prompt_tokens=40, completion_tokens=2)]
    llm = LLM(chat(endpoint))
    assert llm.chat(ASK, max_tokens=16) == "Acme"
    sent = endpoint.requests[0]
    assert sent["messages"] == ASK and sent["model"] == "scripted"
    assert sent["max_tokens"] == 16 and sent["temperature"] == 0.0   # greedy unless asked otherwise
    usage = llm.usage
    assert (usage.calls, usage.cache_hits, usage.prompt_tokens, usage.completion_tokens) == (1, 0, 40, 2)
    assert usage.seconds > 0


def test_cache_answers_a_repeated_prompt_without_a_call(endpoint: ScriptedServer, tmp_path: Path) -> None:
    endpoint.script = [Step("Acme"), Step("Globex"), Step("Initech")]
    cache = ResponseCache(tmp_path / "responses.sqlite")
    first = LLM(chat(endpoint), cache)
    assert first.chat(ASK) == "Acme"
    # a new run (new LLM, same cache file): the same prompt costs no call and gives the same text
    again = LLM(chat(endpoint), ResponseCache(tmp_path / "responses.sqlite"))
    assert again.chat(ASK) == "Acme"
    assert (again.usage.calls, again.usage.cache_hits) == (0, 1)
    assert len(endpoint.requests) == 1
    # other parameters or another model are other keys; no cache (--no-cache) always calls
    assert again.chat(ASK, max_tokens=7) == "Globex"
    assert LLM(chat(endpoint)).chat(ASK) == "Initech"
    assert len(endpoint.requests) == 3


def test_server_errors_are_retried_then_reported_in_one_line(endpoint: ScriptedServer) -> None:
    endpoint.script = [Step(status=500), Step(status=503), Step("recovered")]
    assert LLM(chat(endpoint, retries=2)).chat(ASK) == "recovered"
    assert len(endpoint.requests) == 3
    endpoint.requests.clear()
    endpoint.script = [Step(status=500, error="boom")] * 3
    with pytest.raises(LLMError) as error:
        LLM(chat(endpoint, retries=2)).chat(ASK)
    assert len(endpoint.requests) == 3
    assert str(error.value) == f"the LLM endpoint {endpoint.base_url} answered HTTP 500 (after 2 retries): boom"


def test_timeout(endpoint: ScriptedServer) -> None:
    endpoint.script = [Step("late", delay=3)]
    with pytest.raises(LLMError, match=r"did not answer within 0.5 s$"):
        LLM(chat(endpoint, timeout=0.5, retries=0)).chat(ASK)


def test_unknown_model_and_unreachable_endpoint() -> None:
    server = ScriptedServer(default=lambda body: Step(status=404, error=f"model '{body['model']}' not found"))
    try:
        with pytest.raises(LLMError) as error:
            LLM(chat(server, model="no-such-model")).chat(ASK)
        assert str(error.value) == (f"model 'no-such-model' is not served at {server.base_url} "
                                    "(HTTP 404: model 'no-such-model' not found)")
    finally:
        server.close()
    with socket.socket() as s:   # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(LLMError, match=rf"^cannot reach the LLM endpoint http://127.0.0.1:{port}/v1 \(after 1 retries\)"):
        LLM(OpenAIChat("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=2, max_retries=1)).chat(ASK)


def test_json_output_is_schema_constrained_and_validated(endpoint: ScriptedServer) -> None:
    endpoint.script = [Step('{"company": "Acme", "confidence": 0.9}')]
    llm = LLM(chat(endpoint))
    assert llm.json(ASK, Pick) == Pick(company="Acme", confidence=0.9)
    sent = endpoint.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == Pick.model_json_schema()


@pytest.mark.parametrize("reply", [
    '```json\n{"company": "Acme", "confidence": 0.9}\n```',                 # a code fence
    'Sure! Here it is: {"company": "Acme", "confidence": 0.9,} Hope it helps.',  # prose, trailing comma
    '{"company": "Acme", "confidence": 0.9',                                # cut off
    '{"company": "Acme", "meta": {"x": 1}, "confidence": 0.9',            # cut off after a nested object
])
def test_broken_json_is_repaired_without_a_second_call(endpoint: ScriptedServer, reply: str) -> None:
    endpoint.script = [Step(reply)]
    llm = LLM(chat(endpoint))
    assert llm.json(ASK, Pick).model_dump(exclude={"meta"}) == {"company": "Acme", "confidence": 0.9}
    assert len(endpoint.requests) == 1 and llm.usage.retries == 0


def test_unusable_json_is_retried_with_the_problem_then_counted_as_a_failure(endpoint: ScriptedServer) -> None:
    endpoint.script = [Step('{"company": "Acme"}'), Step('{"company": "Acme", "confidence": 1}')]
    llm = LLM(chat(endpoint))
    assert llm.json(ASK, Pick) == Pick(company="Acme", confidence=1.0)
    retry = endpoint.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": '{"company": "Acme"}'}
    assert "does not fit the schema (confidence: Field required)" in retry[-1]["content"]
    assert (llm.usage.retries, llm.usage.failures) == (1, 0)

    endpoint.script = [Step("I cannot answer that."), Step("Still no JSON.")]
    with pytest.raises(LLMOutputError) as error:
        llm.json([{"role": "user", "content": "another question"}], Pick)
    assert error.value.text == "Still no JSON."
    assert str(error.value) == "openai:scripted: reply not JSON (Expecting value at column 1) after 2 attempts"
    assert llm.usage.failures == 1


def test_a_server_without_json_schema_output_gets_the_next_form(endpoint: ScriptedServer) -> None:
    def json_mode_only(body):
        if body["response_format"] != {"type": "json_object"}:
            return Step(status=400, error=f"response_format {body['response_format']['type']} is not supported")
        return Step('{"company": "Acme", "confidence": 0.5}')

    endpoint.default = json_mode_only
    llm = LLM(chat(endpoint))
    assert llm.json(ASK, Pick).company == "Acme"
    assert [r["response_format"] for r in endpoint.requests] == [
        {"type": "json_schema", "json_schema": {"name": "reply", "schema": Pick.model_json_schema()}},
        {"type": "json_object", "schema": Pick.model_json_schema()},   # llama.cpp's server form
        {"type": "json_object"}]
    endpoint.requests.clear()
    assert llm.json([{"role": "user", "content": "again"}], Pick).company == "Acme"   # remembered: one request
    assert len(endpoint.requests) == 1


def test_streams_arrive_in_pieces_and_are_cached(endpoint: ScriptedServer, tmp_path: Path) -> None:
    endpoint.script = [Step("Yes it did [1]")]
    llm = LLM(chat(endpoint), ResponseCache(tmp_path / "c.sqlite"))
    pieces = list(llm.stream(ASK))
    assert pieces == ["Yes ", "it ", "did ", "[1]"]
    assert endpoint.requests[0]["stream"] is True
    assert (llm.usage.calls, llm.usage.completion_tokens, llm.usage.prompt_tokens) == (1, 4, 11)
    assert list(llm.stream(ASK)) == ["Yes it did [1]"] and len(endpoint.requests) == 1


def test_a_stalled_stream_times_out(endpoint: ScriptedServer) -> None:
    endpoint.script = [Step("one two three", chunk_delay=2)]
    llm = LLM(chat(endpoint, timeout=0.5, retries=0))
    with pytest.raises(LLMError, match="did not answer within 0.5 s|cannot reach"):
        list(llm.stream(ASK))


def test_backend_choice_from_settings(monkeypatch, tmp_path: Path) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "MHGRAPH_LLM_MODEL", "MHGRAPH_LLM_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    none = tmp_path / "none.toml"
    none.write_text("")
    assert load_llm(load_settings(config_path=none)) is None      # auto with no endpoint: offline
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(Exception, match="needs a model name: give --llm-model, or set MHGRAPH_LLM_MODEL"):
        load_llm(load_settings(config_path=none))
    monkeypatch.setenv("MHGRAPH_LLM_MODEL", "m")
    llm = load_llm(load_settings({"cache_dir": tmp_path}, config_path=none))
    assert llm is not None and llm.label == "openai:m" and llm.cache is not None
    assert load_llm(load_settings({"llm_backend": "none"}, config_path=none)) is None
    bad = tmp_path / "bad.toml"
    bad.write_text('llm_backend = "gpt"\n')
    with pytest.raises(Exception, match=rf"setting 'llm_backend' from {bad}: expected one of auto, openai, local, "
                                        "none, got 'gpt'"):
        load_settings(config_path=bad)


def test_an_empty_reply_is_not_cached_and_any_backend_error_is_one_line(endpoint: ScriptedServer,
                                                                        tmp_path: Path) -> None:
    endpoint.script = [Step(""), Step("Acme")]
    llm = LLM(chat(endpoint), ResponseCache(tmp_path / "c.sqlite"))
    assert llm.chat(ASK) == "" and llm.chat(ASK) == "Acme"     # the empty one was asked again
    assert len(endpoint.requests) == 2

    class Broken:
        backend, model, identity = "openai", "broken", "x"

        def complete(self, messages, **params):
            raise RuntimeError("llama_decode returned -1")

    broken = LLM(Broken())
    with pytest.raises(LLMError, match=r"^openai:broken: RuntimeError: llama_decode returned -1$"):
        broken.chat(ASK)
    assert broken.usage.calls == 1


def test_the_cache_tells_endpoints_apart(tmp_path: Path) -> None:
    one, two = ScriptedServer(default=lambda b: Step("from one")), ScriptedServer(default=lambda b: Step("from two"))
    try:
        cache = ResponseCache(tmp_path / "c.sqlite")
        assert LLM(chat(one), cache).chat(ASK) == "from one"
        assert LLM(chat(two), cache).chat(ASK) == "from two"    # same model name, another server
    finally:
        one.close()
        two.close()


def test_a_missing_local_backend_points_to_the_cached_build(monkeypatch, tmp_path: Path) -> None:
    """Not `pip install 'mhgraph[local-llm]'`, which compiles llama.cpp for minutes every time."""
    import dataclasses

    from mhgraph.llm.local import LlamaCppChat
    from mhgraph.llm.packaged import DEFAULT_LOCAL_MODEL, PACKAGED_GGUF

    monkeypatch.setitem(sys.modules, "llama_cpp", None)   # importing it raises ImportError
    with pytest.raises(LLMError) as missing:
        LlamaCppChat(tmp_path / "model.gguf")
    # the default model's parts, as if not installed (a made-up module name: nothing is joined)
    parts = dataclasses.replace(PACKAGED_GGUF[DEFAULT_LOCAL_MODEL], module_prefix="mhgraph_test_no_such_part")
    with pytest.raises(LLMError) as no_parts:
        parts.assemble(tmp_path)
    for error in (missing, no_parts):
        assert "bash scripts/build-llama-cpp.sh" in str(error.value) and "pip install" not in str(error.value)
