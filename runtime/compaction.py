"""Compaction: the older part of a session's transcript replaced, for the model, by a summary
the model writes; the recent rows stay verbatim and the full transcript stays in the store.

The cut falls where a round starts (never between a tool_use and its tool_result). The
summary request is a separate one: the compacted rows as a plain-text record (who said what,
tool calls and their results, shortened), and a prompt that says what to keep. If it fails,
the oldest rows are left out with a marker instead: compaction never fails a turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from runtime.context import Budget, ContextUse, rows_chars
from runtime.errors import ProviderError
from runtime.events import Event
from runtime.messages import MessageKind, QueueEntry
from runtime.payloads import ContextCompacted
from runtime.providers.base import (
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
    request_chars,
)
from runtime.store.store import Store
from runtime.store.usage import Bill
from runtime.transcript import (
    AttachmentBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    TranscriptMessage,
)

log = logging.getLogger(__name__)

RESULT_CHARS = 2_000  # of a tool result, in the record the summary is written from
SUMMARY_SYSTEM = (
    "You keep the memory of a long-running agent. The conversation below is being removed "
    "from its context window; what you write replaces it, and the agent will know nothing "
    "of it but your summary."
)
SUMMARY_REQUEST = (
    "Summarize the conversation above for the agent that will carry on from here. Keep, "
    "precisely: every decision made and why; open tasks and promises not yet kept; facts, "
    "names, numbers, ids, paths and settings the operators gave, each with who gave it; what "
    "the tools found that still matters; the operators' preferences and instructions. Leave "
    "out greetings and anything already done and no longer relevant. Write plain text, "
    "grouped under short headings, at most a page."
)
Guard = Callable[[Awaitable[ProviderResponse]], Awaitable[ProviderResponse]]

# Before the rows up to a cut are summarized (runtime/memory_flush.py): what it cost.
Flush = Callable[[Transcript, int], Awaitable[Usage]]


@dataclass(frozen=True, slots=True)
class Compacted:
    rows: int  # rows the summary now stands for
    summary: str
    fallback: bool
    usage: Usage  # what the flush and the summary requests cost


def starts_round(row: TranscriptMessage) -> bool:
    """A transcript may begin again here: not a user row answering the tool calls before it."""
    return not (row.role == "user" and any(isinstance(b, ToolResultBlock) for b in row.blocks))


def choose_cut(rows: list[TranscriptMessage], keep_chars: int) -> int:
    """How many leading rows to compact: as few as leave at most `keep_chars` of recent rows,
    else as many as a valid cut allows (the last row always stays). 0: none can be."""
    best, suffix = 0, 0
    for i in range(len(rows) - 1, 0, -1):
        suffix += rows_chars([rows[i]])
        if best and suffix > keep_chars:
            break
        if starts_round(rows[i]):
            best = i
    return best


def _speaker(sources: tuple[str, ...], senders: dict[str, QueueEntry]) -> str:
    entry = next((senders[s] for s in sources if s in senders), None)
    if entry is None:
        return "user"
    p, message = entry.message.provenance, entry.message
    if message.kind is MessageKind.OPERATOR_PROMPT:
        via = f" via {p.surface or message.delivery_surface}" if p.surface else ""
        return f"operator {p.sender or 'unknown'}{via}"
    if message.kind is MessageKind.TASK_RESULT:
        return f"child agent {p.sender or 'unknown'}"
    return f"{message.origin} ({message.kind})"


def record_of(transcript: Transcript, cut: int, senders: dict[str, QueueEntry]) -> str:
    """The rows before `cut` as plain text, with who said each thing."""
    lines = []
    if transcript.summary:
        lines.append(f"[summary of what came before]\n{transcript.summary}")
    for row, sources in zip(transcript.rows[:cut], transcript.sources[:cut], strict=True):
        who = "assistant" if row.role == "assistant" else _speaker(sources, senders)
        for block in row.blocks:
            match block:
                case TextBlock(text=text) if text.strip():
                    lines.append(f"[{who}]\n{text}")
                case ToolUseBlock(name=name, input=tool_input):
                    lines.append(f"[assistant called {name}] {json.dumps(tool_input)[:500]}")
                case AttachmentBlock():
                    lines.append(f"[{who} sent a file] {block.describe()}")
                case ToolResultBlock(content=content, is_error=is_error):
                    kind = "error" if is_error else "result"
                    lines.append(f"[tool {kind}] {content[:RESULT_CHARS]}")
    return "\n\n".join(lines)


async def compact(
    store: Store,
    provider: Provider,
    transcript: Transcript,
    *,
    session_id: str,
    run_id: str | None,
    budget: Budget,
    context: ContextUse,
    guard: Guard,
    requested: bool = False,
    bill: Bill | None = None,
    flush: Flush | None = None,
) -> Compacted | None:
    """Compact `transcript` in the store and in memory; None when nothing can be compacted.
    `guard` runs the summary request (a turn makes it cancellable by a stop); `bill` records
    what it cost, in the transaction that records the compaction. `flush` (an agent that
    keeps memory) runs first, over the rows about to be summarized, and is awaited: no
    summary is asked for while it is unfinished."""
    keep_chars = int(budget.keep_tokens / context.tokens_per_char)
    cut = choose_cut(transcript.rows, keep_chars)
    tokens_before = context.estimate(rows_chars(transcript.rows) + len(transcript.summary or ""))
    if cut == 0:
        if requested:  # the operator hears that there was nothing to do
            nothing = ContextCompacted(
                rows=0,
                tokens_before=tokens_before,
                tokens_after=tokens_before,
                record_chars=0,
                summary_chars=0,
                fallback=False,
                error=None,
                requested=True,
            )
            await store.emit(Event(nothing, session_id, run_id))
        return None
    flushed = await flush(transcript, cut) if flush is not None else Usage()
    ids = [i for sources in transcript.sources[:cut] for i in sources]
    senders = {e.id: e for e in await store.messages_by_id(ids)}
    record = record_of(transcript, cut, senders)
    ask = TranscriptMessage(role="user", blocks=[TextBlock(text=f"{record}\n\n{SUMMARY_REQUEST}")])
    request = ProviderRequest(
        model=provider.model,
        system=SUMMARY_SYSTEM,
        messages=[ask],
        tools=[],
        max_tokens=max(256, min(budget.max_tokens, budget.keep_tokens // 2)),
    )
    usage, error, answered_by, provider_name = Usage(), None, None, None
    try:
        response = await guard(provider.complete(request, lambda _: None, lambda *_: None))
        usage, summary = response.usage, response.text().strip()
        answered_by, provider_name = response.model or provider.model, response.provider
        context.observe(request, usage)
        if not summary:
            error = "the model wrote an empty summary"
    except ProviderError as exc:
        error, summary = str(exc), ""
    if error is not None:
        log.warning("compaction summary failed", extra={"session_id": session_id, "error": error})
        summary = _fallback(transcript.summary, cut, error)
    tokens_after = context.estimate(rows_chars(transcript.rows[cut:]) + len(summary))
    async with store.write() as w:
        if bill is not None and answered_by is not None:
            bill(w, answered_by, provider_name, usage)
        w.record_compaction(
            session_id, run_id, transcript.row_ids[cut - 1], summary, fallback=error is not None
        )
        w.emit(
            Event(
                ContextCompacted(
                    rows=cut,
                    tokens_before=tokens_before,
                    tokens_after=tokens_after,
                    record_chars=request_chars(request),
                    summary_chars=len(summary),
                    fallback=error is not None,
                    error=error,
                    requested=requested,
                ),
                session_id,
                run_id,
            )
        )
    transcript.compacted(cut, summary)
    return Compacted(cut, summary, error is not None, flushed + usage)


def _fallback(previous: str | None, rows: int, error: str) -> str:
    marker = (
        f"[{rows} earlier messages were left out here to fit the model's context window; "
        f"no summary of them could be made ({error[:200]}).]"
    )
    return f"{previous}\n\n{marker}" if previous else marker


async def unguarded(request: Awaitable[ProviderResponse]) -> ProviderResponse:
    """The guard of a compaction outside a turn: nothing can cancel it but a shutdown."""
    return await request
