"""A Chat Completions stream, read into a `ProviderResponse`.

As for the Messages API (anthropic_stream.py), the SDK makes the request and raises its
status errors (`with_streaming_response`); here each `data:` line is one `json.loads`. The
chunks (https://platform.openai.com/docs/api-reference/chat-streaming): a first one with
the role, text in `delta.content`, each tool call in `delta.tool_calls` by `index` (its id,
type and name first, then its `function.arguments` in fragments), `finish_reason` in the
last chunk of the choice, then (asked for with `stream_options.include_usage`) a chunk with
no choices and the usage, then `data: [DONE]`. An `{"error": ...}` chunk mid-stream is
raised as the SDK raises it.

Every tool call gets a new transcript id (`tool_ids.mint`): an OpenAI-compatible server may
give the same id in every round (`call_0`), and the transcript's ids must be unique.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai

from runtime.errors import Failure, ProviderError
from runtime.providers import tool_ids
from runtime.providers.base import ProviderResponse, StopReason, TextSink, Usage
from runtime.transcript import TextBlock, ToolUseBlock

log = logging.getLogger(__name__)

STOP_REASONS = {
    "stop": StopReason.END_TURN,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSAL,
}


@dataclass(slots=True)
class _Call:
    server_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Answer:
    model: str = ""
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    def apply(self, chunk: dict[str, Any], on_text: TextSink) -> None:
        self.model = chunk.get("model") or self.model
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # one choice is asked for (n = 1)
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.text.append(delta["content"])
                on_text(delta["content"])
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            for fragment in delta.get("tool_calls") or []:
                self._call_fragment(fragment)
            self.finish_reason = choice.get("finish_reason") or self.finish_reason

    def _call_fragment(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        if index is None:  # a server that sends each call whole, without an index
            index = len(self.calls) if fragment.get("id") or not self.calls else max(self.calls)
        call = self.calls.setdefault(index, _Call())
        call.server_id = fragment.get("id") or call.server_id
        function = fragment.get("function") or {}
        call.name = function.get("name") or call.name  # sent whole, in the first fragment
        if function.get("arguments"):
            call.arguments.append(function["arguments"])

    def response(self) -> ProviderResponse:
        stop = STOP_REASONS.get(self.finish_reason or "", StopReason.END_TURN)
        if self.refusal:
            stop = StopReason.REFUSAL
        text = "".join(self.text) or "".join(self.refusal)
        calls = []
        for _, call in sorted(self.calls.items()):
            tool_input = _arguments(call, cut=stop is StopReason.MAX_TOKENS)
            if tool_input is not None:
                calls.append(ToolUseBlock(id=tool_ids.mint(), name=call.name, input=tool_input))
        if calls and stop is StopReason.END_TURN:
            stop = StopReason.TOOL_USE  # Ollama's `stop` with tool calls: they are to be run
        blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text=text)] if text else []
        blocks.extend(calls)
        return ProviderResponse(
            blocks=blocks, stop_reason=stop, model=self.model, usage=_usage(self.usage)
        )


def _arguments(call: _Call, *, cut: bool) -> dict[str, Any] | None:
    """A call's arguments as the object they must be. A call cut off by max_tokens is
    dropped (None) however far it got; a whole one that is not a JSON object is a broken
    answer: a ProviderError that may be retried (another sample is usually whole)."""
    raw = "".join(call.arguments).strip() or "{}"
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    if cut:
        return None
    log.warning("tool call arguments not a JSON object", extra={"tool": call.name})
    raise ProviderError(
        f"the model called {call.name!r} with arguments that are not a JSON object: {raw[:200]}",
        failure=Failure.OVERLOADED,
        retryable=True,
    )


def _usage(usage: dict[str, Any]) -> Usage:
    """OpenAI counts cached tokens inside `prompt_tokens`; ours are apart (uncached input)."""
    prompt = int(usage.get("prompt_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    cached = min(prompt, int(details.get("cached_tokens") or 0))
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_tokens=cached,
    )


def _apply(answer: _Answer, data: str, on_text: TextSink, request: httpx2.Request) -> None:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise openai.APIError(
            f"a chunk that is not JSON: {data[:100]}", request, body=None
        ) from None
    if chunk.get("error"):
        error = chunk["error"] if isinstance(chunk["error"], dict) else {"message": chunk["error"]}
        message = str(error.get("message") or "An error occurred during streaming")
        raise openai.APIError(message, request, body=error)
    answer.apply(chunk, on_text)


async def read_stream(
    response: openai.AsyncAPIResponse[Any], on_text: TextSink
) -> ProviderResponse:
    """The answer the chunks of a streamed response make up; `on_text` hears each piece of
    text. A stream that ends before its finish_reason is an error the caller may retry."""
    answer = _Answer()
    request = response.http_response.request
    try:
        async for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # blank lines, `event:` names, `: comments` (OpenRouter's keep-alives)
            data = line[5:].strip()
            if data == "[DONE]":
                break
            _apply(answer, data, on_text, request)
    # A timeout or a broken connection mid-answer comes as httpx2's own error here: the SDK
    # maps those of the reads it makes itself only.
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request) from exc
    except httpx2.RequestError as exc:
        raise openai.APIConnectionError(message=str(exc), request=request) from exc
    if answer.finish_reason is None:
        raise openai.APIConnectionError(
            message="the answer's stream ended before its finish_reason", request=request
        )
    return answer.response()
