"""Embeddings for memory on Bedrock (Titan V2, Cohere v3) and Vertex through the SDK clients'
signed HTTP, against the loopback fakes: order over batches, the APIs' limits, blank texts,
errors mapped, credentials checked; and the three providers behind one `Embedder`."""

from __future__ import annotations

import asyncio
import json
import math
import socket
from collections.abc import Awaitable, Callable

import anthropic
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from runtime.errors import Failure, ProviderError
from runtime.providers.anthropic_clients import bedrock_client, vertex_client
from runtime.providers.embeddings import BedrockEmbedder, Embedder, VertexEmbedder
from runtime.providers.openai_chat import OpenAIChatProvider
from tests.fakes.anthropic_api import error
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.fakes.openai_api import EMBEDDING_DIMENSIONS, FakeOpenAI, embedding_of
from tests.fakes.vertex_api import ACCESS_TOKEN, PROJECT, REGION, FakeVertex

Serve = Callable[..., Awaitable[TestServer]]
COHERE = "cohere.embed-english-v3"


class WaitingClock:
    """Records each wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return 0.0

    def wall(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


class InFlight:
    """Counts the requests a fake is answering at once (each held a moment)."""

    def __init__(self) -> None:
        self.now = self.most = 0

    @web.middleware
    async def middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.005)
            return await handler(request)
        finally:
            self.now -= 1


@pytest.fixture
def in_flight() -> InFlight:
    return InFlight()


@pytest.fixture
async def bedrock_api(
    aiohttp_server: Serve, monkeypatch: pytest.MonkeyPatch, in_flight: InFlight
) -> FakeBedrock:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # would replace SigV4
    fake = FakeBedrock(region="eu-west-1")
    app = fake.app()
    app.middlewares.append(in_flight.middleware)
    server = await aiohttp_server(app, host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture
async def vertex_api(aiohttp_server: Serve) -> FakeVertex:
    fake = FakeVertex()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture
async def openai_api(aiohttp_server: Serve) -> FakeOpenAI:
    fake = FakeOpenAI()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("/v1"))
    return fake


def on_bedrock(
    url: str,
    cleanup: list[object],
    model: str = "amazon.titan-embed-text-v2:0",
    secret: str = SECRET_KEY,
    **kw: object,
) -> BedrockEmbedder:
    client = bedrock_client("eu-west-1", access_key=ACCESS_KEY, secret_key=secret, base_url=url)
    embedder = BedrockEmbedder(client, model, **kw)  # type: ignore[arg-type]
    cleanup.append(embedder)
    return embedder


def on_vertex(
    fake: FakeVertex, cleanup: list[object], token: str = ACCESS_TOKEN, **kw: object
) -> VertexEmbedder:
    client = vertex_client(REGION, PROJECT, access_token=token, base_url=f"{fake.url}/v1")
    embedder = VertexEmbedder(client, **kw)  # type: ignore[arg-type]
    cleanup.append(embedder)
    return embedder


async def test_titan_sends_one_signed_request_a_text_a_few_at_a_time_in_order(
    bedrock_api: FakeBedrock, cleanup: list[object], in_flight: InFlight
) -> None:
    texts = [f"memory {i}" for i in range(20)] + ["", "   "]
    embedder = on_bedrock(bedrock_api.url, cleanup, limit=3)
    vectors = await embedder.embed(texts)
    assert vectors == [embedding_of(t if t.strip() else " ", 1024) for t in texts]
    assert sorted(bedrock_api.embedded) == sorted([t if t.strip() else " "] for t in texts)
    assert set(bedrock_api.paths) == {"/model/amazon.titan-embed-text-v2:0/invoke"}
    assert 1 < in_flight.most <= 3
    assert bedrock_api.refused == [] and await embedder.embed([]) == []


async def test_titan_refuses_what_bedrock_refuses(
    bedrock_api: FakeBedrock, cleanup: list[object]
) -> None:
    embedder = on_bedrock(bedrock_api.url, cleanup, max_attempts=1)
    with pytest.raises(ProviderError, match="maxLength: 50000") as caught:
        await embedder.embed(["ok", "x" * 50_001])
    assert caught.value.failure is Failure.INVALID and not caught.value.retryable
    assert caught.value.status == 400


async def test_cohere_batches_96_texts_cut_to_its_length_in_order(
    bedrock_api: FakeBedrock, cleanup: list[object]
) -> None:
    texts = [f"note {i}" for i in range(200)] + ["", "y" * 3000]
    vectors = await on_bedrock(bedrock_api.url, cleanup, COHERE).embed(texts)
    sent = [" " if not t.strip() else t[:2048] for t in texts]
    assert vectors == [embedding_of(t, 1024) for t in sent]
    assert sorted(len(batch) for batch in bedrock_api.embedded) == [10, 96, 96]
    assert sorted(t for batch in bedrock_api.embedded for t in batch) == sorted(sent)
    assert bedrock_api.refused == []


async def test_vertex_batches_under_its_instance_and_token_limits_in_order(
    vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    short = [f"fact {i}" for i in range(300)] + [""]
    embedder = on_vertex(vertex_api, cleanup)
    assert await embedder.embed(short) == [embedding_of(t or " ", 768) for t in short]
    assert [len(batch) for batch in vertex_api.embedded] == [250, 51]
    long = [f"{i} " + "z" * 4000 for i in range(30)]  # 30,000 tokens by the fake's count
    assert await embedder.embed(long) == [embedding_of(t, 768) for t in long]
    assert all(len(batch) < 30 for batch in vertex_api.embedded[2:])
    assert [t for batch in vertex_api.embedded[2:] for t in batch] == long
    assert vertex_api.refused == []
    assert vertex_api.paths[0] == (
        f"/v1/projects/{PROJECT}/locations/{REGION}/publishers/google/models/"
        "text-embedding-005:predict"
    )


async def test_vertex_refuses_what_the_embedder_keeps_clear_of(
    vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    """The limits the batching and the blank text keep to, and the key the SDK adds to a
    JSON body (why the embedder sends bytes), are refused with a 400."""
    client = vertex_client(
        REGION, PROJECT, access_token=ACCESS_TOKEN, base_url=f"{vertex_api.url}/v1"
    )
    cleanup.append(client.sdk)
    where = f"/projects/{PROJECT}/locations/{REGION}/publishers/google/models"
    path = f"{where}/text-embedding-005:predict"
    for body, words in [
        ({"instances": [{"content": "a"}] * 251}, "up to 250"),
        ({"instances": [{"content": ""}]}, "text content is empty"),
        ({"instances": [{"content": "z" * 8000}] * 11}, "input token count is 22000"),
    ]:
        with pytest.raises(anthropic.BadRequestError, match=words):
            await client.sdk.post(path, content=json.dumps(body).encode(), cast_to=object)
    with pytest.raises(anthropic.BadRequestError, match='Unknown name "anthropic_version"'):
        await client.sdk.post(path, body={"instances": [{"content": "a"}]}, cast_to=object)
    assert len(vertex_api.refused) == 4 and vertex_api.embedded == []


@pytest.mark.parametrize(
    ("status", "kind", "failure"),
    [
        (429, "ThrottlingException", Failure.RATE_LIMITED),
        (503, "ServiceUnavailableException", Failure.OVERLOADED),
        (500, "InternalServerException", Failure.OVERLOADED),
        (403, "AccessDeniedException", Failure.AUTH),
    ],
)
async def test_bedrock_errors_map_to_their_failure(
    bedrock_api: FakeBedrock, cleanup: list[object], status: int, kind: str, failure: Failure
) -> None:
    bedrock_api.script = [error(status, kind, "no", **{"retry-after": "7"})]
    with pytest.raises(ProviderError) as caught:
        await on_bedrock(bedrock_api.url, cleanup, max_attempts=1).embed(["a"])
    assert caught.value.failure is failure and caught.value.status == status
    assert caught.value.retry_after == 7.0


@pytest.mark.parametrize(
    ("status", "kind", "failure"),
    [
        (429, "RESOURCE_EXHAUSTED", Failure.RATE_LIMITED),
        (503, "UNAVAILABLE", Failure.OVERLOADED),
        (403, "PERMISSION_DENIED", Failure.AUTH),
        (400, "INVALID_ARGUMENT", Failure.INVALID),
    ],
)
async def test_vertex_errors_map_to_their_failure(
    vertex_api: FakeVertex, cleanup: list[object], status: int, kind: str, failure: Failure
) -> None:
    vertex_api.script = [error(status, kind, "no", **{"retry-after": "3"})]
    with pytest.raises(ProviderError) as caught:
        await on_vertex(vertex_api, cleanup, max_attempts=1).embed(["a"])
    assert caught.value.failure is failure and caught.value.status == status
    assert caught.value.retry_after == 3.0


async def test_a_wrong_secret_or_token_is_refused_as_auth(
    bedrock_api: FakeBedrock, vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    with pytest.raises(ProviderError, match="InvalidSignatureException") as caught:
        await on_bedrock(bedrock_api.url, cleanup, secret="wrong" + SECRET_KEY[5:]).embed(["a"])
    assert caught.value.failure is Failure.AUTH and not caught.value.retryable
    with pytest.raises(ProviderError, match="UNAUTHENTICATED") as caught:
        await on_vertex(vertex_api, cleanup, token="ya29.stolen").embed(["a"])
    assert caught.value.failure is Failure.AUTH
    assert bedrock_api.embedded == [] and vertex_api.embedded == []


async def test_no_server_is_unreachable(cleanup: list[object]) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ProviderError) as caught:
        await on_bedrock(f"http://127.0.0.1:{port}", cleanup, max_attempts=1).embed(["a"])
    assert caught.value.failure is Failure.UNREACHABLE and caught.value.retryable


async def test_a_busy_platform_is_asked_again_after_the_wait_it_names(
    bedrock_api: FakeBedrock, vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    clock = WaitingClock()
    bedrock_api.script = [error(429, "ThrottlingException", "slow down", **{"retry-after": "2"})]
    vectors = await on_bedrock(bedrock_api.url, cleanup, clock=clock).embed(["a"])
    assert vectors == [embedding_of("a", 1024)] and clock.waits == [2.0]
    vertex_api.script = [error(503, "UNAVAILABLE", "busy", **{"retry-after": "1"})]
    assert await on_vertex(vertex_api, cleanup, clock=clock).embed(["b"]) == [
        embedding_of("b", 768)
    ]
    assert clock.waits == [2.0, 1.0] and len(vertex_api.embedded) == 2


async def test_the_three_providers_are_interchangeable_behind_the_protocol(
    openai_api: FakeOpenAI, bedrock_api: FakeBedrock, vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    openai = OpenAIChatProvider("gpt-4.1-mini", api_key="sk-test", base_url=openai_api.url)
    cleanup.append(openai)
    embedders: list[Embedder] = [
        openai,
        on_bedrock(bedrock_api.url, cleanup),
        on_vertex(vertex_api, cleanup),
    ]
    texts = ["the deploy runs at noon", "", "the deploy runs at noon"]
    sizes = []
    for embedder in embedders:
        vectors = await embedder.embed(texts)
        assert len(vectors) == 3 and vectors[0] == vectors[2] != vectors[1]
        assert all(math.isclose(math.hypot(*v), 1.0) for v in vectors)
        sizes.append({len(v) for v in vectors})
    assert sizes == [{EMBEDDING_DIMENSIONS}, {1024}, {768}]


async def test_gemini_embedding_is_asked_one_text_a_request(
    vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    embedder = on_vertex(vertex_api, cleanup, model="gemini-embedding-001", dimensions=1536)
    texts = ["alpha", "beta", "gamma"]
    assert await embedder.embed(texts) == [embedding_of(t, 1536) for t in texts]
    assert sorted(vertex_api.embedded) == [["alpha"], ["beta"], ["gamma"]]
