"""Anthropic Messages API through the official SDK: lowering, streaming, retries, errors.

Lowering is neutral transcript -> SDK params with the invariant check before anything is
sent. It marks the request's stable prefix for prompt caching: the last tool, the system
prompt, the summary of the compacted past, and the last block of the last message, so the
next round (or turn) reads all of it from the cache; that is four breakpoints, the API's
maximum. SDK errors are mapped to `ProviderError` in one place. Retries are ours (the SDK's
are turned off) so that the waits use the runtime's clock and each retry is audited.
"""

from __future__ import annotations

import base64
import logging
import random
import re
from collections.abc import Mapping
from typing import Any

import anthropic

from config.errors import CredentialRefused, PlatformUnreachable
from runtime.clock import Clock, SystemClock
from runtime.errors import (
    ContextWindowExceededError,
    Failure,
    ProviderError,
    TranscriptInvariantError,
)
from runtime.prompts import render_summary
from runtime.providers.anthropic_stream import read_stream
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    TextSink,
)
from runtime.tools.base import ToolSpec
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    Block,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
    check_invariants,
    normalize,
)

log = logging.getLogger(__name__)

WINDOW_TIMEOUT_S = 10.0  # the Models API asked at start: a slow answer does not hold it up
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error"})
# How the API words a request that does not fit the context window (input alone; input plus
# max_tokens).
CONTEXT_EXCEEDED = ("prompt is too long", "input length and `max_tokens` exceed context limit")


def _cached(block: dict[str, Any]) -> dict[str, Any]:
    """`block` as a cache breakpoint: the prefix up to and including it is cached."""
    return {**block, "cache_control": {"type": "ephemeral"}}


def lower_request(request: ProviderRequest) -> dict[str, Any]:
    """SDK params for `request`; raises TranscriptInvariantError instead of sending a bad one."""
    rows = list(request.messages)
    summary = (request.summary or "").strip()
    if summary:  # first, as a user message: normalize merges it with a user row after it
        opening = TextBlock(text=render_summary(summary))
        rows.insert(0, TranscriptMessage(role="user", blocks=[opening]))
    messages = normalize(rows)
    problems = check_invariants(messages)
    if problems:
        raise TranscriptInvariantError(problems)
    # normalize dropped every blank text block: no breakpoint can land on one
    lowered = [_map_message(m, request.files) for m in messages]
    if summary:
        lowered[0]["content"][0] = _cached(lowered[0]["content"][0])
    lowered[-1]["content"][-1] = _cached(lowered[-1]["content"][-1])
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": lowered,
    }
    if request.system.strip():
        params["system"] = [_cached({"type": "text", "text": request.system})]
    if request.tools:
        tools = [_map_tool(t) for t in request.tools]
        params["tools"] = [*tools[:-1], _cached(tools[-1])]
    return params


def _map_file(block: AttachmentBlock, files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """A file as the API takes it, after a line naming it: an image or a (PDF) document block
    with its bytes in base64, or a text file's contents in a labelled text block."""
    label = f"[File: {block.describe()}]"
    data = files.get(block.id)
    if data is None:  # not stored (never expected): say so rather than fail the turn
        log.warning("attachment bytes missing", extra={"attachment_id": block.id})
        return [{"type": "text", "text": f"{label} (its contents are not available)"}]
    if block.form is AttachmentForm.TEXT:
        body = data.decode("utf-8", errors="replace")
        return [{"type": "text", "text": f'{label}\n<file name="{block.name}">\n{body}\n</file>'}]
    source = {
        "type": "base64",
        "media_type": block.media_type,
        "data": base64.b64encode(data).decode("ascii"),
    }
    lowered: dict[str, Any] = {"type": block.form.value, "source": source}
    if block.form is AttachmentForm.DOCUMENT:
        lowered["title"] = block.name
    return [{"type": "text", "text": label}, lowered]


def _map_block(block: Block) -> dict[str, Any]:
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ToolUseBlock(id=id_, name=name, input=tool_input):
            return {"type": "tool_use", "id": id_, "name": name, "input": tool_input}
        case ToolResultBlock(tool_use_id=id_, content=content, is_error=is_error):
            return {
                "type": "tool_result",
                "tool_use_id": id_,
                "content": content,
                "is_error": is_error,
            }
    raise TypeError(f"unknown block {block!r}")


def _map_tool_result(block: ToolResultBlock, files: Mapping[str, bytes]) -> dict[str, Any]:
    """A tool result with pictures: the envelope's text, then each picture as an image."""
    lowered = _map_block(block)
    content: list[dict[str, Any]] = [{"type": "text", "text": block.content}]
    for picture in block.attachments:
        content.extend(_map_file(picture, files))
    lowered["content"] = content
    return lowered


def _map_message(message: TranscriptMessage, files: Mapping[str, bytes]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in message.blocks:
        if isinstance(block, AttachmentBlock):
            content.extend(_map_file(block, files))
        elif isinstance(block, ToolResultBlock) and block.attachments:
            content.append(_map_tool_result(block, files))
        else:
            content.append(_map_block(block))
    return {"role": message.role, "content": content}


def _map_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _map_api_error(exc: Exception) -> ProviderError:
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error", {}) if isinstance(body.get("error"), dict) else {}
        kind = str(error.get("type", ""))
        message = str(error.get("message") or exc.message)
        text = f"Anthropic API {exc.status_code} {kind}: {message}".strip()
        if exc.status_code == 400 and message.startswith(CONTEXT_EXCEEDED):
            counted = re.search(r": (\d+)", message)
            return ContextWindowExceededError(
                text,
                status=exc.status_code,
                request_tokens=int(counted.group(1)) if counted else None,
            )
        retryable = exc.status_code in RETRYABLE_STATUS or kind in RETRYABLE_ERROR_TYPES
        return ProviderError(text, status=exc.status_code, retryable=retryable)
    if isinstance(exc, anthropic.APIConnectionError):
        return ProviderError(f"could not reach the Anthropic API: {exc}", retryable=True)
    return ProviderError(f"Anthropic SDK error: {exc}", failure=Failure.INVALID)


class AnthropicProvider:
    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_attempts: int = 5,
        clock: Clock | None = None,
        timeout_s: float = 600.0,
    ) -> None:
        self.model = model
        self.max_attempts = max_attempts
        self._clock = clock or SystemClock()
        # api_key/base_url None: the SDK reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL. Its
        # aiohttp transport: under 50 streams at once it spends less than half the CPU of
        # its default httpx one (docs/benchmarks.md, `python -m bench.provider_bench`).
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
            http_client=anthropic.DefaultAioHttpClient(timeout=timeout_s),
        )

    async def close(self) -> None:
        await self._client.close()

    async def context_window(self) -> int | None:
        """The model's input window as the Models API tells it (`max_input_tokens`); None
        when it cannot be asked or does not say (the name's table is used then)."""
        try:
            found = await self._client.models.retrieve(self.model, timeout=WINDOW_TIMEOUT_S)
        except anthropic.APIError as exc:
            log.warning(
                "context window not known from the Models API; using the table's",
                extra={"model": self.model, "error": str(_map_api_error(exc))},
            )
            return None
        return found.max_input_tokens

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        params = lower_request(request)
        attempt = 1
        while True:
            try:
                return await self._stream_once(params, on_text)
            except (anthropic.APIError, ProviderError) as exc:
                error = exc if isinstance(exc, ProviderError) else _map_api_error(exc)
                if not error.retryable or attempt >= self.max_attempts:
                    raise error from exc
                delay = _retry_delay(exc, attempt)
                log.warning(
                    "provider retry",
                    extra={"attempt": attempt, "delay_s": delay, "error": str(error)},
                )
                on_retry(attempt, delay, str(error))
                await self._clock.sleep(delay)
                attempt += 1

    async def _stream_once(self, params: dict[str, Any], on_text: TextSink) -> ProviderResponse:
        create = self._client.messages.with_streaming_response.create
        async with create(**params, stream=True) as response:
            return await read_stream(response, on_text)


def _retry_delay(exc: Exception, attempt: int) -> float:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(str(headers.get(name))) * scale
        except ValueError:
            continue
        if 0 <= value <= 60:
            return value
    backoff: float = min(8.0, 0.5 * 2 ** (attempt - 1))
    return backoff * (0.75 + random.random() / 2)


async def check_model(model: str, api_key: str | None, base_url: str | None = None) -> str:
    """Does this key reach this model? Asks the Models API for it (no tokens spent); what
    the API calls it, or CredentialRefused with the API's own reason (PlatformUnreachable when
    the API could not be asked)."""
    client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)
    try:
        found = await client.models.retrieve(model)
    except anthropic.NotFoundError:
        raise CredentialRefused(f"Anthropic has no model {model!r} for this key") from None
    except anthropic.InternalServerError as exc:  # a 5xx: the key was not judged
        reason = f"{exc.status_code} {exc.message}"
        raise PlatformUnreachable("the Anthropic API", str(client.base_url), reason) from None
    except anthropic.APIStatusError as exc:
        raise CredentialRefused(str(_map_api_error(exc))) from None
    except anthropic.APIConnectionError as exc:  # the key was not checked
        reason = str(exc.__cause__ or exc)
        raise PlatformUnreachable("the Anthropic API", str(client.base_url), reason) from None
    finally:
        await client.close()
    return f"model {found.id} ({found.display_name})"
