"""The OpenAI-compatible provider's failures, each mapped once to the failure a fallback acts
on, and retried (waiting on the runtime's clock, as long as the server asked) or not; its
embeddings and its probe."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from runtime.errors import ContextWindowExceededError, Failure, ProviderError
from runtime.providers.base import ProviderRequest
from runtime.providers.openai_chat import EMBED_BATCH, OpenAIChatProvider, lower_request
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes.openai_api import FakeOpenAI, Reply, embedding_of, error, text
from tests.fakes.openai_rules import InvalidRequest, check_chat_request

MODEL = "gpt-4.1-mini"
Serve = Callable[..., Awaitable[TestServer]]
QUOTA = "You exceeded your current quota, please check your plan and billing details."
TOO_LONG = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted in "
    "130542 tokens. Please reduce the length of the messages."
)


class WaitingClock:
    """Records each wait and returns at once: retries are tested without sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return 0.0

    def wall(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
async def openai_api(aiohttp_server: Serve) -> FakeOpenAI:
    fake = FakeOpenAI()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("/v1"))
    return fake


@pytest.fixture
def clock() -> WaitingClock:
    return WaitingClock()


def _provider(
    url: str, cleanup: list[object], clock: WaitingClock, **kw: Any
) -> OpenAIChatProvider:
    kw.setdefault("api_key", "test-key")
    provider = OpenAIChatProvider(MODEL, base_url=url, clock=clock, **kw)
    cleanup.append(provider)
    return provider


def _request(model: str = MODEL) -> ProviderRequest:
    hello = TranscriptMessage(role="user", blocks=[TextBlock(text="hello")])
    return ProviderRequest(model, "", [hello], [], 100)


def _ignore(*_: object) -> None:
    pass


RATE_LIMITED = error(429, "requests", "Rate limit reached", code="rate_limit_exceeded")
RETRIED = [
    (
        error(
            429,
            "requests",
            "Rate limit reached",
            code="rate_limit_exceeded",
            **{"retry-after": "2"},
        ),
        Failure.RATE_LIMITED,
        2.0,
    ),
    (
        error(503, "server_error", "The engine is overloaded", **{"retry-after-ms": "250"}),
        Failure.OVERLOADED,
        0.25,
    ),
    (error(500, "server_error", "The server had an error"), Failure.OVERLOADED, None),
    (error(502, "", "Bad gateway"), Failure.OVERLOADED, None),
]


@pytest.mark.parametrize(("reply", "failure", "asked"), RETRIED)
async def test_retryable_failures_are_retried_after_the_wait_asked(
    openai_api: FakeOpenAI,
    cleanup: list[object],
    clock: WaitingClock,
    reply: Reply,
    failure: Failure,
    asked: float | None,
) -> None:
    openai_api.script = [reply, text("made it")]
    notices: list[tuple[int, float, str]] = []
    answer = await _provider(openai_api.url, cleanup, clock).complete(
        _request(), _ignore, lambda *n: notices.append(n)
    )
    assert answer.text() == "made it" and len(openai_api.requests) == 2
    [(attempt, delay, why)] = notices
    assert attempt == 1 and str(reply.status) in why and clock.waits == [delay]
    if asked is not None:
        assert delay == pytest.approx(asked)

    openai_api.script = [reply]  # one attempt: the fallback chain's, which moves on itself
    with pytest.raises(ProviderError) as caught:
        await _provider(openai_api.url, cleanup, clock, max_attempts=1).complete(
            _request(), _ignore, _ignore
        )
    assert caught.value.failure is failure and caught.value.retryable
    assert caught.value.retry_after == asked and len(openai_api.requests) == 3


NOT_RETRIED = [
    (error(429, "insufficient_quota", QUOTA, code="insufficient_quota"), Failure.BILLING, "quota"),
    (error(402, "", "Insufficient credits", code=402), Failure.BILLING, "credits"),
    (error(400, "invalid_request_error", "Invalid 'temperature'"), Failure.INVALID, "temperature"),
    (error(403, "", "Country not supported", code="unsupported_country"), Failure.AUTH, "Country"),
]


@pytest.mark.parametrize(("reply", "failure", "said"), NOT_RETRIED)
async def test_failures_that_waiting_cannot_mend_are_not_retried(
    openai_api: FakeOpenAI,
    cleanup: list[object],
    clock: WaitingClock,
    reply: Reply,
    failure: Failure,
    said: str,
) -> None:
    openai_api.script = [reply, text("never")]
    with pytest.raises(ProviderError, match=said) as caught:
        await _provider(openai_api.url, cleanup, clock).complete(_request(), _ignore, _ignore)
    assert caught.value.failure is failure and not caught.value.retryable
    assert len(openai_api.requests) == 1 and clock.waits == []


async def test_a_request_over_the_window_is_a_context_error_with_its_count(
    openai_api: FakeOpenAI, cleanup: list[object], clock: WaitingClock
) -> None:
    openai_api.script = [
        error(400, "invalid_request_error", TOO_LONG, code="context_length_exceeded")
    ]
    with pytest.raises(ContextWindowExceededError) as caught:
        await _provider(openai_api.url, cleanup, clock).complete(_request(), _ignore, _ignore)
    assert caught.value.failure is Failure.CONTEXT and caught.value.request_tokens == 130542
    assert len(openai_api.requests) == 1


async def test_a_wrong_key_is_refused_as_auth_and_not_retried(
    openai_api: FakeOpenAI, cleanup: list[object], clock: WaitingClock
) -> None:
    openai_api.api_key = "sk-right-key"
    provider = _provider(openai_api.url, cleanup, clock, api_key="sk-wrong-key-1234")
    with pytest.raises(ProviderError, match="Incorrect API key") as caught:
        await provider.complete(_request(), _ignore, _ignore)
    assert caught.value.failure is Failure.AUTH and caught.value.status == 401
    assert "sk-wrong-key-1234" not in str(caught.value) and clock.waits == []


async def test_an_unreachable_server_is_retried_then_said_unreachable(
    unused_tcp_port: int, cleanup: list[object], clock: WaitingClock
) -> None:
    provider = _provider(f"http://127.0.0.1:{unused_tcp_port}/v1", cleanup, clock, max_attempts=3)
    with pytest.raises(ProviderError, match="could not reach the openai API") as caught:
        await provider.complete(_request(), _ignore, _ignore)
    assert caught.value.failure is Failure.UNREACHABLE and len(clock.waits) == 2


async def test_a_server_that_does_not_answer_in_time_is_unreachable(
    openai_api: FakeOpenAI, cleanup: list[object], clock: WaitingClock
) -> None:
    never = asyncio.Event()
    openai_api.script = [Reply(text="late", hold=never)]
    provider = _provider(openai_api.url, cleanup, clock, max_attempts=1, timeout_s=0.2)
    with pytest.raises(ProviderError) as caught:
        await provider.complete(_request(), _ignore, _ignore)
    never.set()
    assert caught.value.failure is Failure.UNREACHABLE and caught.value.retryable


async def test_persistent_overload_gives_up_after_max_attempts(
    openai_api: FakeOpenAI, cleanup: list[object], clock: WaitingClock
) -> None:
    openai_api.responder = lambda body: error(500, "server_error", "The server had an error")
    with pytest.raises(ProviderError, match="500"):
        await _provider(openai_api.url, cleanup, clock).complete(_request(), _ignore, _ignore)
    assert len(openai_api.requests) == 5 and len(clock.waits) == 4


async def test_embeddings_come_back_in_order_in_batches(
    openai_api: FakeOpenAI, cleanup: list[object], clock: WaitingClock
) -> None:
    texts = [f"memory {i}" for i in range(EMBED_BATCH + 3)] + [""]
    provider = _provider(openai_api.url, cleanup, clock)
    vectors = await provider.embed(texts)
    assert vectors == [embedding_of(t or " ") for t in texts]
    assert [len(batch) for batch in openai_api.embedded] == [EMBED_BATCH, 4]
    assert await provider.embed([]) == []


async def test_the_probe_asks_for_a_few_tokens_and_says_who_answered(
    openai_api: FakeOpenAI, cleanup: list[object], clock: WaitingClock
) -> None:
    assert await _provider(openai_api.url, cleanup, clock).probe() == "model gpt-4.1-mini answered"
    body = openai_api.requests[0]
    assert body["max_tokens"] == 16 and "stream" not in body
    openai_api.script = [error(503, "server_error", "overloaded")]
    with pytest.raises(ProviderError) as caught:
        await _provider(openai_api.url, cleanup, clock).probe()
    assert caught.value.failure is Failure.OVERLOADED and len(openai_api.requests) == 2
    missing = OpenAIChatProvider("gpt-nonesuch", api_key="k", base_url=openai_api.url)
    cleanup.append(missing)
    with pytest.raises(ProviderError, match="does not exist") as caught:
        await missing.probe()
    assert caught.value.failure is Failure.INVALID


async def test_openai_itself_is_sent_max_completion_tokens_and_others_max_tokens(
    cleanup: list[object], clock: WaitingClock
) -> None:
    direct = _provider("https://api.openai.com/v1", cleanup, clock)
    local = _provider("http://127.0.0.1:11434/v1", cleanup, clock)
    assert (direct.limit_param, local.limit_param) == ("max_completion_tokens", "max_tokens")
    # a reasoning model refuses max_tokens, as OpenAI does; max_completion_tokens passes
    check_chat_request(lower_request(_request("o4-mini"), limit="max_completion_tokens"))
    with pytest.raises(InvalidRequest, match="Use 'max_completion_tokens' instead"):
        check_chat_request(lower_request(_request("o4-mini")))


def test_no_key_at_all_is_said_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="no API key for openrouter") as caught:
        OpenAIChatProvider(MODEL, base_url="http://127.0.0.1:9/v1", name="openrouter")
    assert caught.value.failure is Failure.AUTH
