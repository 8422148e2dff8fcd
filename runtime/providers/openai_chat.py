"""Any OpenAI-compatible Chat Completions API through the official `openai` SDK: OpenAI,
OpenRouter, Ollama, vLLM, by `base_url`. Lowering, streaming, retries, errors, embeddings.

Lowering is neutral transcript -> SDK params with the invariant check before anything is
sent: the system prompt is the first message; an assistant row's tool calls go in its
`tool_calls` (arguments as a JSON string); each tool result is a `tool` message right after
it, one per call, and what else the user row holds (text, files, a tool's pictures, which a
`tool` message cannot carry) follows in one user message. Every tool-call id is mapped to the
server's shape (`id_shape`) through one `tool_ids.lowered` dict, so a conversation begun on
another provider goes on here. OpenAI caches prompt prefixes by itself: nothing is marked,
and `prompt_tokens_details.cached_tokens` is reported as cache reads. SDK errors are mapped to
`ProviderError` in one place; retries are ours (the SDK's are off), waiting on the runtime's
clock.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import openai

from runtime.clock import Clock, SystemClock
from runtime.errors import (
    ContextWindowExceededError,
    Failure,
    ProviderError,
    TranscriptInvariantError,
    failure_of,
)
from runtime.prompts import render_summary
from runtime.providers import tool_ids
from runtime.providers.base import ProviderRequest, ProviderResponse, RetryNotice, TextSink
from runtime.providers.history import SameIds
from runtime.providers.lowered_history import Lowered, kept_for, lowered_messages, missing_files
from runtime.providers.openai_stream import read_stream
from runtime.tools.base import ToolSpec
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
    check_invariants,
    normalize,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

OPENAI_HOST = "api.openai.com"
MAX_RETRY_WAIT_S = 60.0  # a longer Retry-After is left to the fallback chain, not waited here
PROBE_TIMEOUT_S = 10.0
PROBE_MAX_TOKENS = 16  # some OpenAI models refuse a smaller limit
EMBED_BATCH = 256  # inputs per embeddings request: under every server's limit (OpenAI: 2,048)
BILLING_CODES = frozenset(
    {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}
)
# How OpenAI (`context_length_exceeded`), vLLM and OpenRouter word a request too long.
CONTEXT_WORDS = re.compile(r"maximum context length|context_length_exceeded|context window", re.I)
COUNTED = re.compile(r"(?:resulted in|requested(?: about)?) (\d+) tokens")


def lower_request(
    request: ProviderRequest,
    id_shape: tool_ids.IdShape = tool_ids.OPENAI,
    *,
    limit: str = "max_tokens",
) -> dict[str, Any]:
    """SDK params for `request` (`limit`: the name the server takes for max_tokens); raises
    TranscriptInvariantError instead of sending a bad one."""
    summary = (request.summary or "").strip()
    key = ("openai", id_shape)  # what is kept was checked against this shape
    kept = kept_for(request.history, summary, key)
    rows = list(request.messages)
    if summary:  # first, as a user message: normalize merges it with a user row after it
        opening = kept.rows[0] if kept and kept.rows else None
        text = TextBlock(text=render_summary(summary))
        rows.insert(0, opening or TranscriptMessage(role="user", blocks=[text]))
    lowered: list[dict[str, Any]] = []
    if request.system.strip():
        lowered.append({"role": "system", "content": request.system})
    done = None
    if request.history is not None:  # only what the new rows changed is lowered
        request.history.kept.pop(key, None)  # put back once it holds this request
        same = SameIds()

        def lower(_: int, message: TranscriptMessage) -> list[dict[str, Any]]:
            return _map_message(message, request.files, same)

        missing = missing_files(request.files)
        done = lowered_messages(rows, summary, kept or Lowered(summary), lower, missing, id_shape)
    if done is not None:
        assert request.history is not None
        request.history.kept[key] = done
        for part in done.lowered:
            lowered.extend(part)
    else:
        messages = normalize(rows)
        problems = check_invariants(messages)
        if problems:
            raise TranscriptInvariantError(problems)
        ids = tool_ids.lowered(_tool_call_ids(messages), id_shape)
        for message in messages:
            lowered.extend(_map_message(message, request.files, ids))
    params: dict[str, Any] = {
        "model": request.model,
        limit: request.max_tokens,
        "messages": lowered,
    }
    if request.tools:
        params["tools"] = [_map_tool(t) for t in request.tools]
    return params


def _map_message(
    message: TranscriptMessage, files: Mapping[str, bytes], ids: Mapping[str, str]
) -> list[dict[str, Any]]:
    if message.role == "assistant":
        return [_map_assistant(message, ids)]
    return _map_user(message, files, ids)


def _tool_call_ids(messages: list[TranscriptMessage]) -> list[str]:
    return [
        b.id if isinstance(b, ToolUseBlock) else b.tool_use_id
        for m in messages
        for b in m.blocks
        if isinstance(b, ToolUseBlock | ToolResultBlock)
    ]


def _map_assistant(message: TranscriptMessage, ids: Mapping[str, str]) -> dict[str, Any]:
    calls = [
        {
            "id": ids[b.id],
            "type": "function",
            "function": {"name": b.name, "arguments": json.dumps(b.input)},
        }
        for b in message.tool_uses()
    ]
    lowered: dict[str, Any] = {"role": "assistant", "content": message.text() or None}
    if calls:
        lowered["tool_calls"] = calls
    return lowered


def _map_user(
    message: TranscriptMessage, files: Mapping[str, bytes], ids: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The tool messages answering the previous row's calls, then the user's message."""
    lowered: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.blocks:
        if isinstance(block, ToolResultBlock):
            content = f"Error: {block.content}" if block.is_error else block.content
            lowered.append(
                {"role": "tool", "tool_call_id": ids[block.tool_use_id], "content": content}
            )
            for picture in block.attachments:  # a tool message holds text only
                parts.append(_text(f"[A picture from the tool call {ids[block.tool_use_id]}]"))
                parts.extend(_map_file(picture, files))
        elif isinstance(block, AttachmentBlock):
            parts.extend(_map_file(block, files))
        elif isinstance(block, TextBlock):
            parts.append(_text(block.text))
    if parts:
        lowered.append({"role": "user", "content": _content(parts)})
    return lowered


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Text alone as one string (what every compatible server takes); parts when a file is
    among them."""
    if all(p["type"] == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)
    return parts


def _map_file(block: AttachmentBlock, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """A file as the API takes it, after a line naming it: an image as a data URL, a PDF as a
    `file` part, a text file's contents in a labelled text part."""
    label = f"[File: {block.describe()}]"
    data = files.get(block.id)
    if data is None:  # not stored (never expected): say so rather than fail the turn
        log.warning("attachment bytes missing", extra={"attachment_id": block.id})
        return [_text(f"{label} (its contents are not available)")]
    if block.form is AttachmentForm.TEXT:
        body = data.decode("utf-8", errors="replace")
        return [_text(f'{label}\n<file name="{block.name}">\n{body}\n</file>')]
    url = f"data:{block.media_type};base64,{base64.b64encode(data).decode('ascii')}"
    if block.form is AttachmentForm.IMAGE:
        return [_text(label), {"type": "image_url", "image_url": {"url": url}}]
    return [_text(label), {"type": "file", "file": {"filename": block.name, "file_data": url}}]


def _map_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """How long the server asked to wait (`retry-after-ms`, `retry-after` in seconds)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(str(headers.get(name))) * scale
        except ValueError:
            continue
        if value >= 0:
            return value
    return None


def map_api_error(exc: Exception, name: str = "openai") -> ProviderError:
    """The SDK's error as ours, once. OpenAI answers an exhausted quota with 429
    `insufficient_quota`: billing, not a rate limit (waiting does not help)."""
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        error = exc.body if isinstance(exc.body, dict) else {}
        said = error.get("code") or error.get("type")
        code = "" if said in (None, status) else str(said)  # OpenRouter's code is the status
        message = str(error.get("message") or exc.message)
        text = (
            f"{name} API {status} {code}: {message}" if code else f"{name} API {status}: {message}"
        )
        if status in (400, 413) and CONTEXT_WORDS.search(f"{code} {message}"):
            counted = COUNTED.search(message)
            tokens = int(counted.group(1)) if counted else None
            return ContextWindowExceededError(text, status=status, request_tokens=tokens)
        billing = code in BILLING_CODES or str(error.get("type")) in BILLING_CODES
        return ProviderError(
            text,
            status=status,
            failure=Failure.BILLING if billing else failure_of(status),
            retry_after=_retry_after(exc.response.headers),
        )
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError is one too
        return ProviderError(f"could not reach the {name} API: {exc}", failure=Failure.UNREACHABLE)
    if isinstance(exc, openai.APIError):  # an error chunk mid-stream
        return _mid_stream_error(exc, name)
    return ProviderError(f"{name} SDK error: {exc}", failure=Failure.INVALID)


def _mid_stream_error(exc: openai.APIError, name: str) -> ProviderError:
    body = exc.body if isinstance(exc.body, dict) else {}
    said = body.get("code")
    status = said if isinstance(said, int) else None  # OpenRouter puts the status there
    failure = failure_of(status) if status else Failure.OVERLOADED
    if "rate_limit" in f"{said} {body.get('type')}":
        failure = Failure.RATE_LIMITED
    return ProviderError(
        f"{name} API error mid-answer: {exc.message}", status=status, failure=failure
    )


def _retry_delay(error: ProviderError, attempt: int) -> float:
    if error.retry_after is not None and error.retry_after <= MAX_RETRY_WAIT_S:
        return error.retry_after
    backoff: float = min(8.0, 0.5 * 2 ** (attempt - 1))
    return backoff * (0.75 + random.random() / 2)


class OpenAIChatProvider:
    """A model behind an OpenAI-compatible Chat Completions API. `name` says which in errors
    and logs (the config's provider name); `id_shape` the tool-call ids its server takes."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_attempts: int = 5,
        clock: Clock | None = None,
        timeout_s: float = 600.0,
        id_shape: tool_ids.IdShape = tool_ids.OPENAI,
        name: str = "openai",
        embedding_model: str = "text-embedding-3-small",
    ) -> None:
        self.model = model
        self.name = name
        self.max_attempts = max_attempts
        self.id_shape = id_shape
        self.embedding_model = embedding_model
        self._clock = clock or SystemClock()
        # api_key/base_url None: the SDK reads OPENAI_API_KEY and OPENAI_BASE_URL. A local
        # server that wants no key still needs one set (any text, as Ollama's docs say). The
        # aiohttp transport, as for Anthropic.
        if not (api_key or os.environ.get("OPENAI_API_KEY")):
            raise ProviderError(
                f"no API key for {name}: set its api_key (or OPENAI_API_KEY)", failure=Failure.AUTH
            )
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=openai.DefaultAioHttpClient(timeout=timeout_s),
        )
        # OpenAI's own API refuses `max_tokens` for its reasoning models and takes
        # `max_completion_tokens` for all; Ollama, LM Studio and older servers know only the
        # first (and ignore the second: no limit at all).
        openai_itself = self._client.base_url.host == OPENAI_HOST
        self.limit_param = "max_completion_tokens" if openai_itself else "max_tokens"

    async def close(self) -> None:
        await self._client.close()

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        params = lower_request(request, self.id_shape, limit=self.limit_param)
        return await self._retrying(lambda: self._stream_once(params, on_text), on_retry)

    async def _stream_once(self, params: dict[str, Any], on_text: TextSink) -> ProviderResponse:
        create = self._client.chat.completions.with_streaming_response.create
        async with create(
            **params, stream=True, stream_options={"include_usage": True}
        ) as response:
            return await read_stream(response, on_text)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Each text's embedding by `embedding_model`, in order. A blank text is sent as one
        space (the API refuses an empty input)."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = [t if t.strip() else " " for t in texts[start : start + EMBED_BATCH]]

            async def once(batch: list[str] = batch) -> list[list[float]]:
                answer = await self._client.embeddings.create(
                    model=self.embedding_model, input=batch, encoding_format="float"
                )
                return [d.embedding for d in sorted(answer.data, key=lambda d: d.index)]

            vectors.extend(await self._retrying(once, _no_notice))
        return vectors

    async def probe(self) -> str:
        """Does this key get an answer from this model? A completion of a few tokens, one
        attempt: the Models API would say a model exists while its completions fail (what a
        fallback's half-open probe must know), and vLLM and OpenRouter do not serve
        `/models/{id}`. Raises the mapped ProviderError."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": "Say OK."}],
            self.limit_param: PROBE_MAX_TOKENS,
        }
        try:
            answer = await self._client.chat.completions.create(**params, timeout=PROBE_TIMEOUT_S)
        except openai.APIError as exc:
            raise map_api_error(exc, self.name) from exc
        return f"model {answer.model} answered"

    async def _retrying(self, attempt_once: Callable[[], Awaitable[T]], on_retry: RetryNotice) -> T:
        attempt = 1
        while True:
            try:
                return await attempt_once()
            except (openai.APIError, ProviderError) as exc:
                error = exc if isinstance(exc, ProviderError) else map_api_error(exc, self.name)
                if not error.retryable or attempt >= self.max_attempts:
                    if error is exc:
                        raise
                    raise error from exc
                delay = _retry_delay(error, attempt)
                log.warning(
                    "provider retry",
                    extra={
                        "provider": self.name,
                        "attempt": attempt,
                        "delay_s": delay,
                        "error": str(error),
                    },
                )
                on_retry(attempt, delay, str(error))
                await self._clock.sleep(delay)
                attempt += 1


def _no_notice(attempt: int, delay_s: float, reason: str) -> None:
    """An embeddings call's retries are logged only (no turn to tell)."""
