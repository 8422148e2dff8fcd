"""The Messages API's server-sent events, read into a `ProviderResponse`.

The SDK's stream helper (`messages.stream`) builds a pydantic model of every event and a
snapshot of the whole message after each one: about 3 ms of CPU for a short answer on a
2-core machine (`docs/benchmarks.md`, issue 18), more than the rest of a turn. The SDK still
makes the request (its client, headers, status errors: `with_streaming_response`); here each
event is one `json.loads`, and the answer is put together once, from what the events say
(https://docs.anthropic.com/en/docs/build-with-claude/streaming): `message_start` (the model,
the input usage), each block's `content_block_start` / `_delta` / `_stop` (text as it comes,
a tool call's input as JSON in pieces), `message_delta` (the stop reason, the final usage),
`message_stop`; an `error` event mid-stream is raised as the SDK raises it. Bedrock sends the
same events, each in an AWS event-stream frame."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

import anthropic
import httpx2

from runtime.providers.base import ProviderResponse, StopReason, TextSink, Usage
from runtime.transcript import TextBlock, ToolUseBlock


class SseResponse(Protocol):
    """What is read of a streamed response: the SDK's, or aiohttp's (`anthropic_post.py`)."""

    @property
    def http_response(self) -> httpx2.Response: ...

    def iter_lines(self) -> AsyncIterator[str]: ...


class _Answer:
    def __init__(self) -> None:
        self.model = ""
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json_parts: dict[int, list[str]] = {}
        self.stopped = False

    def apply(self, event: dict[str, Any], on_text: TextSink) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event["message"]
            self.model = message.get("model", "")
            self.usage = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            self.blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            self._delta(event["index"], event["delta"], on_text)
        elif kind == "content_block_stop":
            parts = self.json_parts.pop(event["index"], None)
            if parts is not None:
                self.blocks[event["index"]]["input"] = json.loads("".join(parts) or "{}")
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason") or self.stop_reason
            usage = event.get("usage") or {}
            self.usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: dict[str, Any], on_text: TextSink) -> None:
        block = self.blocks[index]
        if delta["type"] == "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            on_text(delta["text"])
        elif delta["type"] == "input_json_delta":
            self.json_parts.setdefault(index, []).append(delta["partial_json"])

    def response(self) -> ProviderResponse:
        blocks: list[TextBlock | ToolUseBlock] = []
        for _, block in sorted(self.blocks.items()):
            if block["type"] == "text" and block.get("text"):
                blocks.append(TextBlock(text=block["text"]))
            elif block["type"] == "tool_use":
                blocks.append(
                    ToolUseBlock(id=block["id"], name=block["name"], input=dict(block["input"]))
                )
        try:
            stop = StopReason(self.stop_reason or "end_turn")
        except ValueError:
            stop = StopReason.END_TURN
        usage = Usage(
            input_tokens=int(self.usage.get("input_tokens") or 0),
            output_tokens=int(self.usage.get("output_tokens") or 0),
            cache_read_tokens=int(self.usage.get("cache_read_input_tokens") or 0),
            cache_write_tokens=int(self.usage.get("cache_creation_input_tokens") or 0),
        )
        return ProviderResponse(blocks=blocks, stop_reason=stop, model=self.model, usage=usage)


async def read_stream(
    response: SseResponse, on_text: TextSink, aws_event_stream: bool = False
) -> ProviderResponse:
    """The answer the events of a streamed response make up; `on_text` hears each piece of
    text. `aws_event_stream`: the events come in AWS event-stream frames (Bedrock, through the
    SDK)."""
    answer = _Answer()
    if aws_event_stream:
        assert isinstance(response, anthropic.AsyncAPIResponse)
        events = _aws_events(response)
    else:
        events = _sse_events(response)
    async for event_name, data in events:
        if event_name == "error" or data.get("type") == "error":
            error = data.get("error") or {}
            message = f"{error.get('type', 'error')}: {error.get('message', '')}"
            raise anthropic.APIStatusError(message, response=response.http_response, body=data)
        answer.apply(data, on_text)
    if not answer.stopped:
        raise anthropic.APIConnectionError(
            message="the answer's stream ended before message_stop",
            request=response.http_response.request,
        )
    return answer.response()


async def _sse_events(response: SseResponse) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Each server-sent event's name and data."""
    event_name = ""
    async for line in response.iter_lines():
        if line.startswith("event:"):
            event_name = line[6:].strip()
        elif line.startswith("data:"):
            yield event_name, json.loads(line[5:])


async def _aws_events(
    response: anthropic.AsyncAPIResponse[Any],
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Each event of Bedrock's stream, as the SDK's own decoder reads the frames (botocore
    checks their CRCs): a `chunk` carries one Messages API event in base64; an exception
    frame (`throttlingException`, `modelStreamErrorException`, ...) becomes an `error`
    event named for it."""
    # imported here: it brings botocore, which only Bedrock needs
    from anthropic.lib.bedrock._stream_decoder import AWSEventStreamDecoder

    async for event in AWSEventStreamDecoder().aiter_bytes(response.iter_bytes()):
        yield event.event or "", json.loads(event.data)
