"""What each of Bedrock's failures means to a fallback: its `Failure`, and the wait it asked
for, through the SDK's Bedrock client against the loopback fake."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer as AiohttpServer

from config.errors import CredentialRefused
from runtime.errors import ContextWindowExceededError, Failure, ProviderError
from runtime.providers.anthropic import AnthropicProvider, check_claude
from runtime.providers.anthropic_clients import Client, bedrock_client
from runtime.providers.base import ProviderRequest
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes.anthropic_api import Reply, error, text
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock

MODEL = "anthropic.claude-haiku-4-5-20251001-v1:0"
REQUEST = ProviderRequest(
    MODEL, "", [TranscriptMessage(role="user", blocks=[TextBlock(text="hi")])], [], 256
)


@pytest.fixture
async def bedrock_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]], monkeypatch: pytest.MonkeyPatch
) -> FakeBedrock:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    fake = FakeBedrock()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


def on_bedrock(
    url: str, *, secret: str = SECRET_KEY, attempts: int = 1, timeout_s: float = 30.0
) -> AnthropicProvider:
    client = bedrock_client(
        "us-east-1", access_key=ACCESS_KEY, secret_key=secret, base_url=url, timeout_s=timeout_s
    )
    return AnthropicProvider(MODEL, client=client, max_attempts=attempts)


def ignore(*_: object) -> None:
    """Streamed text and retry notices, where a test does not look at them."""


async def failure_of(provider: AnthropicProvider) -> ProviderError:
    try:
        with pytest.raises(ProviderError) as raised:
            await provider.complete(REQUEST, ignore, ignore)
    finally:
        await provider.close()
    return raised.value


THROTTLED = "Too many requests, please wait before trying again."


@pytest.mark.parametrize(
    "reply,failure,retry_after",
    [
        (error(429, "ThrottlingException", THROTTLED, **{"Retry-After": "7"}), "rate_limited", 7),
        (error(429, "ThrottlingException", THROTTLED), Failure.RATE_LIMITED, None),
        (error(503, "ServiceUnavailableException", "Service unavailable"), "overloaded", None),
        (error(429, "ModelNotReadyException", "Model is not ready"), Failure.OVERLOADED, None),
        (error(500, "InternalServerException", "Internal error"), Failure.OVERLOADED, None),
        (error(424, "ModelErrorException", "Model error"), Failure.OVERLOADED, None),
        (error(403, "AccessDeniedException", "no access to this model"), Failure.AUTH, None),
        (error(400, "ServiceQuotaExceededException", "quota exceeded"), Failure.BILLING, None),
        (error(404, "ResourceNotFoundException", "Model not found"), Failure.INVALID, None),
        (
            Reply([{"type": "text", "text": "a"}], stream_error="throttlingException"),
            "rate_limited",
            None,
        ),
        (
            Reply([{"type": "text", "text": "a"}], stream_error="modelStreamErrorException"),
            "overloaded",
            None,
        ),
    ],
)
async def test_each_error_is_mapped_to_its_failure_with_the_wait_asked_for(
    bedrock_api: FakeBedrock, reply: Reply, failure: Failure, retry_after: float | None
) -> None:
    bedrock_api.script = [reply]
    raised = await failure_of(on_bedrock(bedrock_api.url))
    assert raised.failure == failure and raised.retry_after == retry_after
    assert raised.retryable is (failure in ("rate_limited", "overloaded"))
    assert "Amazon Bedrock" in str(raised)
    assert len(bedrock_api.requests) == 1, "one attempt: the fallback owns the moving on"


async def test_a_wrong_secret_is_refused_by_the_signature_check(bedrock_api: FakeBedrock) -> None:
    raised = await failure_of(on_bedrock(bedrock_api.url, secret="not-the-secret" + SECRET_KEY))
    assert raised.failure is Failure.AUTH and not raised.retryable
    assert raised.status == 403 and "InvalidSignatureException" in str(raised)
    assert bedrock_api.requests == []


async def test_a_prompt_too_long_is_the_context_windows_to_handle(bedrock_api: FakeBedrock) -> None:
    bedrock_api.context_window = 100
    raised = await failure_of(on_bedrock(bedrock_api.url))
    assert isinstance(raised, ContextWindowExceededError)
    assert raised.failure is Failure.CONTEXT and raised.request_tokens is not None


async def test_no_answer_is_unreachable(bedrock_api: FakeBedrock) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    raised = await failure_of(on_bedrock(url))
    assert raised.failure is Failure.UNREACHABLE and raised.retryable
    bedrock_api.script = [text("late", hold=asyncio.Event())]
    raised = await failure_of(on_bedrock(bedrock_api.url, timeout_s=0.3))
    assert raised.failure is Failure.UNREACHABLE and "timed out" in str(raised).lower()


async def test_a_throttled_request_is_retried_after_the_wait(bedrock_api: FakeBedrock) -> None:
    bedrock_api.script = [
        error(429, "ThrottlingException", THROTTLED, **{"retry-after-ms": "20"}),
        text("made it"),
    ]
    waits: list[tuple[int, float, str]] = []
    provider = on_bedrock(bedrock_api.url, attempts=3)
    try:
        answer = await provider.complete(REQUEST, ignore, lambda *notice: waits.append(notice))
    finally:
        await provider.close()
    assert answer.text() == "made it"
    [(attempt, delay, reason)] = waits
    assert attempt == 1 and delay == pytest.approx(0.02) and "ThrottlingException" in reason


async def test_a_bedrock_api_key_is_sent_instead_of_a_signature(bedrock_api: FakeBedrock) -> None:
    bedrock_api.api_key = "ABSKQmVkcm9ja0FQSUtleS1mYWtl"
    bedrock_api.script = [text("keyed")]
    client = bedrock_client("us-east-1", api_key=bedrock_api.api_key, base_url=bedrock_api.url)
    provider = AnthropicProvider(MODEL, client=client, max_attempts=1)
    try:
        answer = await provider.complete(REQUEST, ignore, ignore)
    finally:
        await provider.close()
    assert answer.text() == "keyed"
    client = bedrock_client("us-east-1", api_key="ABSK-revoked", base_url=bedrock_api.url)
    raised = await failure_of(AnthropicProvider(MODEL, client=client, max_attempts=1))
    assert raised.failure is Failure.AUTH and raised.status == 403


async def test_the_probe_reaches_the_model_with_these_keys(bedrock_api: FakeBedrock) -> None:
    def client(secret: str) -> Client:
        return bedrock_client(
            "us-east-1", access_key=ACCESS_KEY, secret_key=secret, base_url=bedrock_api.url
        )

    assert await check_claude(client(SECRET_KEY), MODEL) == f"model {MODEL} on Amazon Bedrock"
    assert bedrock_api.paths == [f"/model/{MODEL}/invoke"]
    with pytest.raises(CredentialRefused, match="InvalidSignatureException"):
        await check_claude(client("wrong" + SECRET_KEY), MODEL)


async def test_credentials_boto_cannot_find_are_the_keys_failure(
    bedrock_api: FakeBedrock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No keys given: boto3's chain is asked, here for a profile that is not there (as an
    expired SSO session or a removed profile would fail); nothing is sent."""
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_PROFILE", "switchboard-gone")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    client = bedrock_client("ap-south-2", base_url=bedrock_api.url)
    raised = await failure_of(AnthropicProvider(MODEL, client=client, max_attempts=3))
    assert raised.failure is Failure.AUTH and not raised.retryable
    assert "switchboard-gone" in str(raised) and bedrock_api.requests == []


async def test_temporary_keys_are_sent_with_their_session_token(bedrock_api: FakeBedrock) -> None:
    bedrock_api.session_token = "FwoGZXIvYXdzEfake//session+token="
    bedrock_api.script = [text("with a token")]

    def client(token: str | None) -> Client:
        return bedrock_client(
            "us-east-1",
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            session_token=token,
            base_url=bedrock_api.url,
        )

    provider = AnthropicProvider(MODEL, client=client(bedrock_api.session_token), max_attempts=1)
    try:
        assert (await provider.complete(REQUEST, ignore, ignore)).text() == "with a token"
    finally:
        await provider.close()
    raised = await failure_of(AnthropicProvider(MODEL, client=client(None), max_attempts=1))
    assert raised.failure is Failure.AUTH and "UnrecognizedClientException" in str(raised)


async def test_no_credentials_anywhere_is_the_keys_failure_not_a_crash(
    bedrock_api: FakeBedrock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No keys given and boto3's chain finds none at all: the SDK raises a bare RuntimeError,
    which is the key's failure (so a fallback stands in), not an internal error."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    client = bedrock_client("ap-south-2", base_url=bedrock_api.url)
    raised = await failure_of(AnthropicProvider(MODEL, client=client, max_attempts=3))
    assert raised.failure is Failure.AUTH and not raised.retryable
    assert "credentials" in str(raised) and bedrock_api.requests == []
