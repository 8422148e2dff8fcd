"""`switchboard check-config --probe` with many providers, run as an admin types it, against
the loopback fakes of Anthropic's API, an OpenAI-compatible server, Claude on Bedrock and
Claude on Vertex: each connection some agent's chain uses is probed once per model an agent
uses, one line each saying ok or what is wrong and what to change; an entry no chain names
is said to be unused; a server that cannot be asked checked nothing; the exit status says
whether all passed; no key is printed."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from adapters.server.probe_providers import provider_checks
from config.errors import CredentialRefused
from config.loading import load
from tests.adapters.cli_process import run_to_end
from tests.config_file import anthropic, workspace, write_config
from tests.fakes import openai_api
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.vertex_api import PROJECT, REGION, FakeVertex

Server = Callable[..., Awaitable[AiohttpServer]]
ANTHROPIC_KEY = "probe-anthropic-key-right"
OPENAI_KEY = "probe-openai-key-right"
WRONG_KEY = "probe-openai-key-wrong"
WRONG_TOKEN = "ya29.probe-token-expired"


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but never listening: a server that cannot be reached."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


async def served(aiohttp_server: Server, fake: Any) -> str:
    server: Any = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return str(fake.url)


def openai(url: str, key: str, model: str = "gpt-4.1-mini") -> dict[str, Any]:
    return {"kind": "openai", "base_url": f"{url}/v1", "api_key": key, "model": model}


def agents(workspace_table: Mapping[str, Any], *more: dict[str, Any]) -> dict[str, Any]:
    """The workspace with more agents beside its own."""
    return {**workspace_table, "agents": [*workspace_table["agents"], *more]}


def config(tmp_path: Path, provider: dict[str, Any], providers: dict[str, Any], *more: Any) -> Path:
    acme = agents(workspace("acme", [{"id": "alice", "primary": True}], console="alice"), *more)
    return write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        provider=provider,
        providers=providers,
        workspaces=[acme],
    )


async def test_every_provider_an_agent_uses_is_probed_once_and_a_refused_key_is_named(
    tmp_path: Path, aiohttp_server: Server, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.api_key = ANTHROPIC_KEY
    compatible = FakeOpenAI()
    compatible.api_key = OPENAI_KEY
    compatible.responder = lambda body: openai_api.text("OK")
    url = await served(aiohttp_server, compatible)
    bedrock = FakeBedrock(region="eu-west-1")
    bedrock_url = await served(aiohttp_server, bedrock)
    vertex = FakeVertex()
    vertex_url = await served(aiohttp_server, vertex)
    provider = {**anthropic(anthropic_api.url, api_key=ANTHROPIC_KEY), "fallback": ["backup"]}
    providers = {
        "backup": openai(url, OPENAI_KEY),
        "second": openai(url, WRONG_KEY, "gpt-4o"),
        "aws": {
            "kind": "bedrock",
            "region": "eu-west-1",
            "model": "anthropic.claude-sonnet-4-5",
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "base_url": bedrock_url,
        },
        "gcp": {
            "kind": "vertex",
            "region": REGION,
            "project_id": PROJECT,
            "model": "claude-sonnet-4-5@20250929",
            "access_token": WRONG_TOKEN,
            "base_url": f"{vertex_url}/v1",
        },
        "spare": openai(url, OPENAI_KEY, "o4-mini"),
    }
    path = config(
        tmp_path,
        provider,
        providers,
        {"id": "cheap", "provider": "second", "fallback": ["aws", "gcp"]},
        {"id": "picky", "model": "claude-nope"},
        {"id": "twin", "fallback": ["backup", "aws"]},
    )
    status, out = await run_to_end("check-config", "--config", path, "--probe")
    assert status == 1, out
    assert (
        "ok    provider (anthropic, claude-test-model): model claude-test-model (Claude Test Model)"
        in out
    )
    assert "ok    providers.backup (openai, gpt-4.1-mini): model gpt-4.1-mini answered" in out
    assert (
        "FAIL  providers.second (openai, gpt-4o): openai API 401 invalid_api_key: Incorrect API"
        in out
    )
    assert "/api-keys; check api_key (else OPENAI_API_KEY)" in out
    assert (
        "ok    providers.aws (bedrock, anthropic.claude-sonnet-4-5): model "
        "anthropic.claude-sonnet-4-5 on Amazon Bedrock" in out
    )
    assert "FAIL  providers.gcp (vertex, claude-sonnet-4-5@20250929): Google Vertex AI 401" in out
    assert "check access_token (or application default credentials" in out
    assert (
        "FAIL  provider (anthropic, claude-nope): Anthropic has no model 'claude-nope' for this "
        "key; set model to one this key may use" in out
    )
    assert "providers.aws: bedrock (anthropic.claude-sonnet-4-5) in eu-west-1 at http" in out
    assert (
        "agent cheap: tools notify_operator, sleep, spawn_agent, schedule_wakeup; model second "
        "gpt-4o, then aws anthropic.claude-sonnet-4-5, then gcp claude-sonnet-4-5@20250929" in out
    )
    assert "skip  providers.spare: no agent's provider or fallback names it; not probed" in out
    # Three agents fall back to `backup`, two to `aws`: each was asked once.
    assert [r["model"] for r in compatible.requests] == ["gpt-4.1-mini"]
    assert len(bedrock.requests) == 1
    for secret in (ANTHROPIC_KEY, OPENAI_KEY, WRONG_KEY, WRONG_TOKEN, SECRET_KEY):
        assert secret not in out


async def test_a_server_that_cannot_answer_checked_nothing(
    tmp_path: Path, aiohttp_server: Server, anthropic_api: FakeAnthropic, closed_port: int
) -> None:
    anthropic_api.api_key = ANTHROPIC_KEY
    busy = FakeOpenAI()
    busy.responder = lambda body: openai_api.error(503, "server_error", "The engine is overloaded")
    url = await served(aiohttp_server, busy)
    provider = {**anthropic(anthropic_api.url, api_key=ANTHROPIC_KEY), "fallback": ["local"]}
    providers = {
        "local": {**openai(f"http://127.0.0.1:{closed_port}", "ollama", "llama3.2")},
        "busy": openai(url, OPENAI_KEY),
        "nokey": {"kind": "openai", "base_url": f"{url}/v1", "model": "gpt-4o"},
    }
    path = config(
        tmp_path, provider, providers, {"id": "night", "provider": "busy", "fallback": ["nokey"]}
    )
    status, out = await run_to_end(
        "check-config", "--config", path, "--probe", env={"OPENAI_API_KEY": ""}
    )
    assert status == 1, out
    assert "ok    provider (anthropic, claude-test-model)" in out
    assert (
        "FAIL  providers.local (openai, llama3.2): not checked: could not reach the "
        f"OpenAI-compatible API at 127.0.0.1:{closed_port} (" in out
    )
    assert "nothing was checked: check base_url and that the server is up" in out
    assert "FAIL  providers.busy (openai, gpt-4.1-mini): not checked: could not reach" in out
    assert f"at 127.0.0.1:{closed_port} ([Errno 111] Connect call failed" in out
    assert "(openai API 503 server_error: The engine is overloaded); nothing was checked" in out
    assert (
        "FAIL  providers.nokey (openai, gpt-4o): no API key for openai: set its api_key "
        "(or OPENAI_API_KEY)\n" in out
    )


async def test_a_missing_extra_is_named_with_the_pip_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "botocore.exceptions", None)  # as without [bedrock]
    aws = {"kind": "bedrock", "region": "us-east-1", "model": "anthropic.claude-haiku-4-5"}
    path = config(tmp_path, {"kind": "offline"}, {"aws": aws}, {"id": "night", "provider": "aws"})
    checks, unused = provider_checks(load(path))
    assert [where for where, _ in checks] == ["providers.aws (bedrock, anthropic.claude-haiku-4-5)"]
    with pytest.raises(CredentialRefused) as refused:
        await checks[0][1]()
    assert str(refused.value) == (
        "Claude on Bedrock needs the bedrock extra: pip install 'switchboard[bedrock]'"
    )
    assert unused == []


async def test_no_cloud_credentials_anywhere_are_a_refusal_saying_where_they_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith(("AWS_", "GOOGLE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance role either
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    providers = {
        "aws": {"kind": "bedrock", "region": "us-east-1", "base_url": "http://127.0.0.1:9"},
        "gcp": {"kind": "vertex", "region": "us-east5", "project_id": PROJECT},
    }
    path = config(
        tmp_path,
        {"kind": "offline"},
        providers,
        {"id": "n", "provider": "aws", "fallback": ["gcp"]},
    )
    checks, _ = provider_checks(load(path))
    said = []
    for _, check in checks:
        with pytest.raises(CredentialRefused) as refused:
            await check()
        said.append(str(refused.value))
    assert said[0].startswith("Amazon Bedrock credentials: Could not resolve AWS credentials")
    assert "; check aws_access_key_id and aws_secret_access_key (or api_key" in said[0]
    assert said[1].startswith("Google Vertex AI credentials: File ")
    assert "application default credentials: `gcloud auth application-default login`" in said[1]
