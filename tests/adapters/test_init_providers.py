"""`switchboard init` offers every provider: Anthropic's API, Claude on Amazon Bedrock (its
region, keys or the AWS default chain), Claude on Google Vertex AI (region, project), an
OpenAI-compatible server (base URL, key, model) and a fallback. Each choice, typed into a real
terminal or given as flags, is checked against the loopback fakes as `check-config --probe`
checks it, and writes a config that loads, whose agent's chain is the one chosen, with every
secret a `${NAME}` kept in the env file beside it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from config.loading import load
from config.providers import DEFAULT
from tests.adapters.cli_process import run_to_end
from tests.adapters.pty_process import PtyProcess
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram

Server = Callable[..., Awaitable[AiohttpServer]]
TOKEN = "1000001:fake-bot-token-of-the-init-tests-1"
OPENAI_KEY = "init-openai-key-right"
ANTHROPIC_KEY = "-".join(["sk", "ant", "fake", "key", "of", "the", "fallback"])
WRONG_SECRET = "w" * 40  # an AWS secret's shape, not the fake's
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


async def served(aiohttp_server: Server, fake: Any) -> str:
    server: Any = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return str(fake.url)


@pytest.fixture
async def bedrock_api(aiohttp_server: Server) -> FakeBedrock:
    fake = FakeBedrock(region="eu-west-1")
    await served(aiohttp_server, fake)
    return fake


@pytest.fixture
async def openai_api(aiohttp_server: Server) -> FakeOpenAI:
    fake = FakeOpenAI()
    fake.api_key = OPENAI_KEY
    await served(aiohttp_server, fake)
    return fake


def chain(path: Path) -> list[tuple[str, str, str]]:
    """The agent's chain in the written config: each link's name, kind and model (loaded
    from the file and its env file alone, as `switchboard run` does)."""
    config = load(path, environ={})
    workspace = config.workspaces[0]
    links = config.chain_of(workspace, workspace.agents[0])
    return [(link.name, link.connection.kind, link.connection.model) for link in links]


async def test_bedrock_with_a_fallback_typed_in_a_terminal(
    tmp_path: Path,
    telegram_api: FakeTelegram,
    bedrock_api: FakeBedrock,
    openai_api: FakeOpenAI,
) -> None:
    telegram_api.token = TOKEN
    terminal = await PtyProcess.start(
        "init",
        "--telegram-api-base-url",
        telegram_api.base_url,
        "--base-url",
        bedrock_api.url,  # where Bedrock is: the fake (the real one is the region's)
        cwd=tmp_path,
    )
    try:
        await terminal.expect("Platforms: telegram, slack or both [telegram]: ")
        terminal.type("telegram")
        await terminal.expect("Telegram bot token (from @BotFather; hidden): ")
        terminal.type(TOKEN)
        await terminal.expect("vertex (Claude on Google Vertex AI), openai (OpenAI, OpenRouter")
        await terminal.expect("Model provider [anthropic]: ")
        terminal.type("bedrock")
        for secret in (WRONG_SECRET, SECRET_KEY):
            await terminal.expect("AWS region (e.g. us-east-1): ")
            terminal.type("eu-west-1")
            await terminal.expect(f"Model on Bedrock [{BEDROCK_MODEL}]: ")
            terminal.type("")
            await terminal.expect("(empty: the AWS default chain: environment, profile, instance")
            terminal.type(ACCESS_KEY)
            await terminal.expect("AWS secret access key (hidden): ")
            terminal.type(secret)
            if secret == WRONG_SECRET:
                await terminal.expect("wrong: Amazon Bedrock 403 InvalidSignatureException")
                await terminal.expect("; check aws_access_key_id and aws_secret_access_key")
                await terminal.expect("Answer again; your other answers are kept.")
        await terminal.expect(f"ok: model {BEDROCK_MODEL} on Amazon Bedrock")
        await terminal.expect("(a rate limit, an outage, spent credit)? [y/N] ")
        terminal.type("y")
        await terminal.expect("Fallback provider: ")
        terminal.type("openai")
        await terminal.expect("Ollama: http://127.0.0.1:11434/v1")
        await terminal.expect("Base URL [https://api.openai.com/v1]: ")
        terminal.type(f"{openai_api.url}/v1")
        await terminal.expect("API key (hidden; a local server that wants none: any text): ")
        terminal.type(OPENAI_KEY)
        await terminal.expect("Model (e.g. gpt-4.1-mini, openai/gpt-4o, llama3.2): ")
        terminal.type("gpt-4.1-mini")
        await terminal.expect("ok: model gpt-4.1-mini answered")
        await terminal.expect("Your Telegram user id (empty: pair by DM instead): ")
        terminal.type("1001")
        status, _ = await terminal.ended()
    finally:
        await terminal.close()
    assert status == 0, terminal.output
    for secret in (WRONG_SECRET, SECRET_KEY, OPENAI_KEY):
        assert secret not in terminal.output, "secrets are typed hidden"
    config = tmp_path / "config" / "bot.toml"
    written, env = config.read_text(), config.with_suffix(".env").read_text()
    assert 'aws_secret_access_key = "${SWITCHBOARD_AWS_SECRET_ACCESS_KEY}"' in written
    assert 'api_key = "${SWITCHBOARD_FALLBACK_API_KEY}"' in written
    for secret in (ACCESS_KEY, SECRET_KEY, OPENAI_KEY):
        assert secret not in written and secret in env
    assert chain(config) == [
        (DEFAULT, "bedrock", BEDROCK_MODEL),
        ("openai", "openai", "gpt-4.1-mini"),
    ]


async def test_an_openai_compatible_server_refused_then_taken_from_flags(
    tmp_path: Path, telegram_api: FakeTelegram, openai_api: FakeOpenAI
) -> None:
    telegram_api.token = TOKEN
    config = tmp_path / "bot.toml"
    args: list[str | Path] = [
        *("init", "--non-interactive", "--config", config, "--platform", "telegram"),
        *("--telegram-token", TOKEN, "--telegram-api-base-url", telegram_api.base_url),
        *("--operator-telegram-id", "1001", "--provider", "openai"),
        *("--base-url", f"{openai_api.url}/v1", "--model", "llama3.2"),
    ]
    status, out = await run_to_end(*args)
    assert status == 2 and "--non-interactive needs: --api-key" in out, out
    status, out = await run_to_end(*args, "--api-key", "ollama")
    assert status == 2 and not config.exists(), out
    assert "an OpenAI-compatible server (llama3.2 at http://127.0.0.1:" in out
    assert "openai API 401 invalid_api_key" in out and "; check api_key" in out
    assert "; nothing was written" in out
    status, out = await run_to_end(*args, "--api-key", OPENAI_KEY)
    assert status == 2 and "The model `llama3.2` does not exist" in out, out
    assert "set model to one the server serves" in out
    openai_api.models.add("llama3.2")
    status, out = await run_to_end(*args, "--api-key", OPENAI_KEY)
    assert status == 0 and "ok: model llama3.2 answered" in out, out
    assert OPENAI_KEY not in config.read_text()
    assert f"OPENAI_API_KEY={OPENAI_KEY}" in config.with_suffix(".env").read_text()
    assert chain(config) == [(DEFAULT, "openai", "llama3.2")]


async def test_vertex_and_bedrock_on_the_default_chain_written_unchecked(
    tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.token = TOKEN
    anthropic_api.api_key = ANTHROPIC_KEY
    config = tmp_path / "bot.toml"
    args: list[str | Path] = [
        *("init", "--non-interactive", "--config", config, "--platform", "telegram"),
        *("--telegram-token", TOKEN, "--telegram-api-base-url", telegram_api.base_url),
        *("--pairing", "--provider", "vertex"),
        *("--fallback", "bedrock", "--fallback-region", "us-east-1"),
    ]
    status, out = await run_to_end(*args, "--fallback-aws-access-key-id", ACCESS_KEY)
    assert status == 2 and not config.exists(), out
    needs = "--region; --project-id; --fallback-aws-access-key-id with --fallback-aws-secret"
    assert needs in out
    args += ["--region", "us-east5", "--project-id", "My_Project"]
    status, out = await run_to_end(*args)
    assert status == 2 and "--project-id: that is not a Google Cloud project id" in out, out
    args[-1] = "acme-agents"
    status, out = await run_to_end(*args, "--no-probe")
    assert status == 0, out
    written = config.read_text()
    assert "#   Claude on Google Vertex AI (claude-sonnet-4-5@20250929 in us-east5)" in written
    assert "# credentials: Google's application default credentials" in written
    assert "# credentials: the AWS default chain" in written
    assert chain(config) == [
        (DEFAULT, "vertex", "claude-sonnet-4-5@20250929"),
        ("bedrock", "bedrock", BEDROCK_MODEL),
    ]
    vertex = load(config, environ={}).provider
    assert (vertex.region, vertex.project_id, vertex.access_token) == (
        "us-east5",
        "acme-agents",
        None,
    )

    # Anthropic's API, with another Anthropic key as its fallback, both checked.
    config.unlink()
    anthropic: list[str | Path] = [
        *args[:11],
        *("--anthropic-key", ANTHROPIC_KEY, "--anthropic-api-base-url", anthropic_api.url),
        *("--fallback", "anthropic", "--fallback-api-key", ANTHROPIC_KEY),
        *("--fallback-base-url", anthropic_api.url, "--fallback-model", "claude-haiku-4-5"),
    ]
    status, out = await run_to_end(*anthropic)
    assert status == 0, out
    assert "ok: model claude-haiku-4-5 (Claude Haiku 4.5)" in out
    assert 'fallback = ["anthropic"]' in config.read_text()
    assert chain(config) == [
        (DEFAULT, "anthropic", "claude-sonnet-4-5"),
        ("anthropic", "anthropic", "claude-haiku-4-5"),
    ]
