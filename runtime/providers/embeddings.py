"""Text embeddings, ready for memory: one `Embedder` shape over the providers a team runs.

An OpenAI-compatible server's is `OpenAIChatProvider.embed` (openai_chat.py). Bedrock and
Vertex go through the `anthropic` SDK's own clients (anthropic_clients.py), which sign any
request they send (SigV4, a Google access token): `sdk.post(path, content=..., cast_to=object)`
reaches the platform's base URL unchanged, since the SDK moves only the Messages paths. The
body goes as bytes because both clients add `anthropic_version` to any JSON body they are
given, a key the embedding models refuse.

- Bedrock: Amazon Titan Text Embeddings V2 (one text a request, sent `limit` at a time) or
  Cohere Embed v3 (96 texts a request, each cut to the 2,048 characters it takes; it would
  truncate them at 512 tokens anyway), by the model named.
- Vertex: a Google embedding model's `:predict`, 250 instances a request and under its
  20,000-token budget.

Each returns vectors in the order of the texts; a blank text is sent as one space (Titan and
Vertex refuse an empty one). Errors are mapped as the Claude provider maps them (Failure by
status and by AWS's or Google's error kind, Retry-After kept); retryable ones are tried again
up to `max_attempts`, waiting on the runtime's clock.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

import anthropic
import httpx2

from config.errors import ConfigError
from runtime.clock import Clock, SystemClock
from runtime.errors import Failure, ProviderError
from runtime.providers.anthropic import map_api_error
from runtime.providers.anthropic_clients import Client

log = logging.getLogger(__name__)

T = TypeVar("T")

TITAN_V2 = "amazon.titan-embed-text-v2:0"
VERTEX_DEFAULT = "text-embedding-005"
TITAN_DIMENSIONS = (256, 512, 1024)
COHERE_BATCH = 96  # texts per request, Cohere Embed on Bedrock's limit
COHERE_CHARS = 2_048  # a text's characters at most (its 512 tokens are about as many)
VERTEX_BATCH = 250  # instances per request
VERTEX_ONE_AT_A_TIME = frozenset({"gemini-embedding-001"})  # one instance a request
VERTEX_TOKEN_BUDGET = 20_000  # input tokens per request
VERTEX_INPUT_TOKENS = 2_048  # an input longer than this is truncated, and counts as this
CHARS_PER_TOKEN_AT_LEAST = 3  # an estimate that overcounts: a batch stays under the budget
MAX_RETRY_WAIT_S = 60.0
HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


class Embedder(Protocol):
    """Texts in, one vector each, in order. `OpenAIChatProvider` is one too."""

    async def embed(self, texts: list[str]) -> list[list[float]]: ...

    async def close(self) -> None: ...


def _sendable(text: str) -> str:
    return text if text.strip() else " "


class _SignedEmbedder:
    """Posts JSON through an SDK client's signed HTTP, retrying what may pass later."""

    def __init__(self, client: Client, *, max_attempts: int, clock: Clock | None) -> None:
        self._client = client
        self.max_attempts = max_attempts
        self._clock = clock or SystemClock()
        self._failures: tuple[type[Exception], ...] = (
            anthropic.AnthropicError,
            httpx2.TransportError,
            *client.auth_errors,
        )

    async def close(self) -> None:
        await self._client.sdk.close()

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        content = json.dumps(body).encode()
        attempt = 1
        while True:
            try:
                answer = await self._client.sdk.post(
                    path, content=content, cast_to=object, options={"headers": HEADERS}
                )
            except self._failures as exc:
                error = self._error(exc)
                if not error.retryable or attempt >= self.max_attempts:
                    raise error from exc
                delay = _retry_delay(error, attempt)
                log.warning(
                    "embeddings retry",
                    extra={
                        "platform": self._client.platform,
                        "attempt": attempt,
                        "delay_s": delay,
                        "failure": error.failure.value,
                        "error": str(error),
                    },
                )
                await self._clock.sleep(delay)
                attempt += 1
                continue
            if not isinstance(answer, dict):
                raise ProviderError(
                    f"{self._client.platform} answered {type(answer).__name__}, not an object",
                    failure=Failure.OVERLOADED,
                )
            return answer

    def _error(self, exc: Exception) -> ProviderError:
        platform = self._client.platform
        if isinstance(exc, self._client.auth_errors):
            return ProviderError(f"{platform} credentials: {exc}", failure=Failure.AUTH)
        return map_api_error(exc, platform)


class BedrockEmbedder(_SignedEmbedder):
    """Embeddings on Amazon Bedrock: Titan Text Embeddings V2 (`dimensions` 256, 512 or
    1024, unit length) or Cohere Embed v3 (`cohere.embed-english-v3`,
    `cohere.embed-multilingual-v3`: 1024, stored as documents)."""

    def __init__(
        self,
        client: Client,
        model: str = TITAN_V2,
        *,
        dimensions: int = 1024,
        limit: int = 8,
        max_attempts: int = 3,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(client.sdk, anthropic.AsyncAnthropicBedrock):
            raise ConfigError(f"a Bedrock embedder needs a Bedrock client, not {client.platform}")
        if "titan-embed-text-v2" in model:
            if dimensions not in TITAN_DIMENSIONS:
                raise ConfigError(f"Titan V2 embeds in {TITAN_DIMENSIONS} dimensions")
            self._cohere = False
        elif "cohere.embed" in model and "v3" in model:
            self._cohere = True
        else:
            raise ConfigError(
                f"unknown Bedrock embedding model {model!r}: Titan Text Embeddings V2 "
                f"({TITAN_V2}) or Cohere Embed v3 (cohere.embed-english-v3)"
            )
        super().__init__(client, max_attempts=max_attempts, clock=clock)
        self.model, self.dimensions, self.limit = model, dimensions, limit
        self._path = f"/model/{model}/invoke"

    async def embed(self, texts: list[str]) -> list[list[float]]:
        sent = [_sendable(t) for t in texts]
        if self._cohere:
            sent = [t[:COHERE_CHARS] for t in sent]
            batches = [sent[i : i + COHERE_BATCH] for i in range(0, len(sent), COHERE_BATCH)]
            return _flat(await _in_order([self._cohere_batch(b) for b in batches], self.limit))
        return await _in_order([self._titan(t) for t in sent], self.limit)

    async def _titan(self, text: str) -> list[float]:
        body = {"inputText": text, "dimensions": self.dimensions, "normalize": True}
        answer = await self._post(self._path, body)
        return [float(x) for x in answer["embedding"]]

    async def _cohere_batch(self, texts: list[str]) -> list[list[float]]:
        body = {"texts": texts, "input_type": "search_document", "truncate": "END"}
        answer = await self._post(self._path, body)
        return [[float(x) for x in vector] for vector in answer["embeddings"]]


class VertexEmbedder(_SignedEmbedder):
    """Embeddings on Google Vertex AI by a Google model (`text-embedding-005`: 768
    dimensions; `dimensions` asks for fewer), in the client's project and region."""

    def __init__(
        self,
        client: Client,
        model: str = VERTEX_DEFAULT,
        *,
        dimensions: int | None = None,
        limit: int = 4,
        max_attempts: int = 3,
        clock: Clock | None = None,
    ) -> None:
        sdk = client.sdk
        if not isinstance(sdk, anthropic.AsyncAnthropicVertex) or sdk.project_id is None:
            raise ConfigError(f"a Vertex embedder needs a Vertex client, not {client.platform}")
        super().__init__(client, max_attempts=max_attempts, clock=clock)
        self.model, self.dimensions, self.limit = model, dimensions, limit
        where = f"/projects/{sdk.project_id}/locations/{sdk.region}"
        self._path = f"{where}/publishers/google/models/{model}:predict"
        self._batch = 1 if model in VERTEX_ONE_AT_A_TIME else VERTEX_BATCH

    async def embed(self, texts: list[str]) -> list[list[float]]:
        batches = _batches([_sendable(t) for t in texts], self._batch)
        return _flat(await _in_order([self._predict(b) for b in batches], self.limit))

    async def _predict(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {
            "instances": [{"content": t, "task_type": "RETRIEVAL_DOCUMENT"} for t in texts]
        }
        if self.dimensions is not None:
            body["parameters"] = {"outputDimensionality": self.dimensions}
        answer = await self._post(self._path, body)
        return [[float(x) for x in p["embeddings"]["values"]] for p in answer["predictions"]]


def _batches(texts: list[str], most: int) -> list[list[str]]:
    """Runs of at most `most` texts whose estimated tokens stay within Vertex's budget."""
    batches: list[list[str]] = []
    batch: list[str] = []
    tokens = 0
    for text in texts:
        cost = min(math.ceil(len(text) / CHARS_PER_TOKEN_AT_LEAST), VERTEX_INPUT_TOKENS)
        if batch and (len(batch) == most or tokens + cost > VERTEX_TOKEN_BUDGET):
            batches.append(batch)
            batch, tokens = [], 0
        batch.append(text)
        tokens += cost
    return [*batches, batch] if batch else batches


async def _in_order(calls: list[Awaitable[T]], limit: int) -> list[T]:
    """Each call's result in order, at most `limit` running at once; the first failure
    stops the rest and is raised."""
    gate = asyncio.Semaphore(limit)

    async def gated(call: Awaitable[T]) -> T:
        async with gate:
            return await call

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(gated(call)) for call in calls]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


def _flat(batches: list[list[list[float]]]) -> list[list[float]]:
    return [vector for batch in batches for vector in batch]


def _retry_delay(error: ProviderError, attempt: int) -> float:
    if error.retry_after is not None and error.retry_after <= MAX_RETRY_WAIT_S:
        return error.retry_after
    backoff: float = min(8.0, 0.5 * 2 ** (attempt - 1))
    return backoff * (0.75 + random.random() / 2)
