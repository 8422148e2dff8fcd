"""A deterministic local model: no key, no network. It shows the runtime's mechanics.

It reads the transcript like a model would and answers from a tiny command language in
the operator's latest prompt:

- ``work N``      N rounds of one-second work (a ``sleep`` tool call each), so you can interject
- ``sleep N``     one ``sleep`` call of N seconds
- ``notify TEXT`` a ``notify_operator`` call
- ``spawn TASK``  a ``spawn_agent`` call
- ``remind WHEN NOTE`` a ``schedule_wakeup`` call ("remind 10s stretch"): the turn ends, and
  a new one starts then with the note
- ``run TOOL``    a call of a configured tool with ``{}``
- anything else   an echo; files that came with it are named (name, type, size)

Interjections are acknowledged visibly ("Noted your message ...") and the plan goes on.
The summary of a compacted past is not read. Usage is estimated at four characters a token,
so the context budget (and compaction) works offline too.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any

from runtime.clock import Clock, SystemClock
from runtime.prompts import (
    INTERJECTION_HEADER,
    TASK_RESULT_HEADER,
    WAKEUP_HEADER,
    framed_wakeup_note,
)
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
    Usage,
    blocks_chars,
    request_chars,
)
from runtime.transcript import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
    normalize,
)

CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class _Call:
    name: str
    input: dict[str, Any]


def _tool_use_id() -> str:
    """Unique across every session and restart, as the real API's `toolu_...` ids are: the
    store keys tool calls by id alone."""
    return f"toolu_offline_{uuid.uuid4().hex[:20]}"


def _plan(prompt: str) -> list[_Call]:
    text = prompt.strip()
    if m := re.match(r"(?i)work\s+(\d+)", text):
        return [_Call("sleep", {"seconds": 1})] * min(int(m.group(1)), 50)
    if m := re.match(r"(?i)sleep\s+(\d+(?:\.\d+)?)", text):
        return [_Call("sleep", {"seconds": float(m.group(1))})]
    if m := re.match(r"(?is)notify\s+(.+)", text):
        return [_Call("notify_operator", {"message": m.group(1).strip()})]
    if m := re.match(r"(?is)spawn\s+(.+)", text):
        return [_Call("spawn_agent", {"task": m.group(1).strip()})]
    if m := re.match(r"(?is)remind\s+(\S+)\s+(.+)", text):
        return [_Call("schedule_wakeup", {"when": m.group(1), "note": m.group(2).strip()})]
    if m := re.match(r"(?i)run\s+(\S+)", text):
        return [_Call(m.group(1), {})]
    return []


def _interjection_text(rendered: str) -> str:
    """The operator's words from a rendered interjection (header, provenance, text)."""
    return rendered.split("\n", 2)[-1]


def _summary(content: str) -> str:
    """A tool result's summary line, from the envelope the runtime gives the model."""
    try:
        return str(json.loads(content).get("summary_text", content))
    except (ValueError, AttributeError):
        return content


def _user_texts(message: TranscriptMessage) -> list[str]:
    return [b.text for b in message.blocks if isinstance(b, TextBlock)]


def _calls_tools(message: TranscriptMessage) -> bool:
    return any(isinstance(b, ToolUseBlock) for b in message.blocks)


def _acknowledged(last: TranscriptMessage) -> str:
    """The visible note of each interjection in the newest message."""
    noted = [_interjection_text(t) for t in _user_texts(last) if t.startswith(INTERJECTION_HEADER)]
    return "".join(f"Noted your message while I was working: “{n}”. " for n in noted)


def _next_step(
    plan: list[_Call], done: int, ack: str, offered: set[str]
) -> list[TextBlock | ToolUseBlock]:
    """The plan's next call, said in words before it."""
    call = plan[done]
    if call.name not in offered:
        return [TextBlock(text=f"{ack}I have no tool named {call.name}.")]
    step = f"Step {done + 1} of {len(plan)}: {call.name}."
    if call.name == "schedule_wakeup":  # the turn ends here: say what comes next
        step = f"I will come back to “{call.input['note']}” in {call.input['when']}."
    return [
        TextBlock(text=f"{ack}{step}"),
        ToolUseBlock(id=_tool_use_id(), name=call.name, input=call.input),
    ]


def _report(steps: int, since: list[TranscriptMessage]) -> str:
    """The end of a plan: its last result and what the operator said meanwhile."""
    results = [
        _summary(b.content) for m in since for b in m.blocks if isinstance(b, ToolResultBlock)
    ]
    heard = [
        _interjection_text(t)
        for m in since
        if m.role == "user"
        for t in _user_texts(m)
        if t.startswith(INTERJECTION_HEADER)
    ]
    lines = [f"Done: {steps} step(s). Last result: {results[-1] if results else '-'}"]
    lines += [f"While I worked you said: “{h}”." for h in heard]
    return "\n".join(lines)


def _reply(prompt: str, files: list[str], ack: str) -> str:
    """The answer to a prompt without a plan (after `ack`): files named, a wake-up's note, a
    child's report, or an echo."""
    if files:
        got = f"I received {len(files)} file(s): {'; '.join(files)}."
        return got + (f" You said: {prompt}" if prompt else "")
    if prompt.startswith(WAKEUP_HEADER):
        note = framed_wakeup_note(prompt) or prompt.split("\n", 1)[-1]
        return f"Woken as you asked: {note}"
    if prompt.startswith(TASK_RESULT_HEADER):
        report = prompt.partition("\n")[2]  # the header line is Switchboard's framing
        return f"My child agent reported back: {report}"
    if prompt:
        return f"You said: {prompt}"
    return "" if ack else "Hello."


class OfflineProvider:
    def __init__(
        self, model: str = "offline", *, latency_s: float = 0.0, clock: Clock | None = None
    ) -> None:
        self.model = model
        self.latency_s = latency_s
        self._clock = clock or SystemClock()

    async def close(self) -> None:
        """Nothing to release: no connections."""

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        if self.latency_s:
            await self._clock.sleep(self.latency_s)
        messages = normalize(request.messages)
        blocks = self._answer(messages, {t.name for t in request.tools})
        for block in blocks:
            if isinstance(block, TextBlock):
                for word in re.findall(r"\S+\s*", block.text):
                    on_text(word)
        stop = (
            StopReason.TOOL_USE
            if any(isinstance(b, ToolUseBlock) for b in blocks)
            else StopReason.END_TURN
        )
        usage = Usage(
            input_tokens=math.ceil(request_chars(request) / CHARS_PER_TOKEN),
            output_tokens=math.ceil(blocks_chars(blocks) / CHARS_PER_TOKEN),
        )
        return ProviderResponse(blocks=blocks, stop_reason=stop, model=self.model, usage=usage)

    def _answer(
        self, messages: list[TranscriptMessage], offered: set[str]
    ) -> list[TextBlock | ToolUseBlock]:
        prompt_index, prompt = self._latest_prompt(messages)
        ack = _acknowledged(messages[-1]) if messages else ""
        plan = _plan(prompt)
        since = messages[prompt_index + 1 :]
        done = sum(1 for m in since if m.role == "assistant" and _calls_tools(m))
        if done < len(plan):
            return _next_step(plan, done, ack, offered)
        if plan:
            return [TextBlock(text=_report(len(plan), since))]
        files = [a.describe() for a in messages[prompt_index].attachments()] if messages else []
        return [TextBlock(text=ack + _reply(prompt, files, ack))]

    @staticmethod
    def _latest_prompt(messages: list[TranscriptMessage]) -> tuple[int, str]:
        """The newest user text that is not an interjection: the task being worked on."""
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].role != "user":
                continue
            texts = [
                t for t in _user_texts(messages[index]) if not t.startswith(INTERJECTION_HEADER)
            ]
            if texts or messages[index].attachments():
                return index, "\n".join(texts).strip()
        return 0, ""
