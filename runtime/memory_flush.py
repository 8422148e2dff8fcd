"""The memory flush before compaction (issue 40): what is about to be summarized away is
offered to the model first, with only the `remember` tool, so that the facts, decisions and
preferences worth keeping beyond the conversation outlive the summary.

It is a side request, like the summary's: the system prompt, the rows about to be compacted
and an instruction; its rounds are never recorded in the transcript. Each `remember` call is
kept through the turn's `TurnMemory` (its audience, session and message; the tool_use id as
the key, so a retry writes nothing twice); /compact between turns, and /new before the session
is left, flush for the audience of the newest message. The request lists what that audience
already keeps, so the model does not keep it twice. At most `ROUNDS` rounds, each charged as
`memory_flush`, then compaction goes on.
A provider error (or a request the transcript invariants refuse) is logged as a warning and
ends the flush: it must never wedge the session, so compaction proceeds without it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from runtime.agents import AgentSpec
from runtime.compaction import Flush, Guard, unguarded
from runtime.errors import ProviderError, TranscriptInvariantError
from runtime.host import Host
from runtime.memory_values import Memory, MemoryScope
from runtime.messages import InboundMessage
from runtime.providers.base import Provider, ProviderRequest, StopReason, Usage
from runtime.recall import UNTRUSTED, UNTRUSTED_MARK, TurnMemory, audience_of, source_of
from runtime.session import Session
from runtime.spend import CallPurpose, Charge
from runtime.store.store import Store
from runtime.store.usage import Bill, bill_of
from runtime.tools.envelope import ToolResult, ToolStatus
from runtime.tools.memory import MEMORY_TOOLS
from runtime.transcript import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    TranscriptMessage,
)
from runtime.turn_types import TurnDeps

log = logging.getLogger(__name__)

ROUNDS = 3  # model rounds a flush may take, at most
FLUSH_REQUEST = (
    "Older messages are about to be summarized. Call remember for each fact, decision or "
    "preference in them worth keeping beyond this conversation that you have not kept yet; "
    "reply 'done' when finished."
)
KEPT_SHOWN = 20  # memories already kept that the request lists, newest first
KEPT_CHARS = 200  # of each one's text
KEPT_HEADER = (
    "Already kept (newest first): do not keep these again; to correct one, remember the new "
    "text with supersedes set to its id."
)
REMEMBER = MEMORY_TOOLS["remember"].spec
ONLY_REMEMBER = "only remember is offered now"
SCOPES = frozenset(s.value for s in MemoryScope)


@dataclass(frozen=True, slots=True)
class MemoryFlush:
    """A turn's flush: `flush(transcript, cut)` before the rows up to `cut` are compacted."""

    memory: TurnMemory
    store: Store
    provider: Provider
    system: str
    max_tokens: int
    guard: Guard  # runs each request (a turn makes it cancellable by a stop)
    bill: Bill  # records each request's usage, in a transaction of its own

    @classmethod
    def of(
        cls,
        memory: TurnMemory,
        deps: TurnDeps,
        system: str,
        guard: Guard,
        bill: Bill,
    ) -> Flush | None:
        """The flush of a turn whose agent keeps memory; None for one that keeps none."""
        if memory.memories is None:
            return None
        budget = deps.budget
        return cls(memory, deps.store, deps.provider, system, budget.max_tokens, guard, bill).flush

    async def flush(self, transcript: Transcript, cut: int) -> Usage:
        """Ask the model to keep what should last of `transcript.rows[:cut]`; what it cost."""
        memory = self.memory
        assert memory.memories is not None
        kept = await memory.memories.listed(memory.audience, KEPT_SHOWN)
        rows = [*transcript.rows[:cut], _ask(request_text(kept))]
        usage = Usage()
        for _ in range(ROUNDS):
            request = ProviderRequest(
                model=self.provider.model,
                system=self.system,
                messages=rows,
                tools=[REMEMBER],
                max_tokens=self.max_tokens,
                summary=transcript.summary,
                files=transcript.files,
            )
            try:
                response = await self.guard(
                    self.provider.complete(request, lambda _: None, lambda *_: None)
                )
            except (ProviderError, TranscriptInvariantError) as exc:
                log.warning(
                    "memory flush failed; compacting without it",
                    extra={"session_id": self.memory.session_id, "error": str(exc)},
                )
                break
            usage += response.usage
            async with self.store.write() as w:
                self.bill(
                    w, response.model or self.provider.model, response.provider, response.usage
                )
            calls = response.tool_uses()
            if not calls or response.stop_reason is StopReason.MAX_TOKENS:
                break  # done (a call cut off mid-way is incomplete: not kept)
            results = [await self._run(call) for call in calls]
            rows.append(TranscriptMessage(role="assistant", blocks=list(response.blocks)))
            rows.append(TranscriptMessage(role="user", blocks=results))
        return usage

    async def _run(self, call: ToolUseBlock) -> ToolResultBlock:
        scope, supersedes = call.input.get("scope"), call.input.get("supersedes")
        if call.name != REMEMBER.name:
            result = ToolResult.failure("not_offered", ONLY_REMEMBER)
        elif scope and scope not in SCOPES:
            result = ToolResult.failure("invalid_input", f"scope must be one of {sorted(SCOPES)}")
        else:
            result = await self.memory.remember(
                str(call.input.get("text", "")),
                str(scope) if scope else None,
                str(supersedes) if supersedes else None,
                call.id,
            )
        return ToolResultBlock(
            tool_use_id=call.id,
            content=result.for_model(),
            is_error=result.status is not ToolStatus.SUCCESS,
        )


@dataclass(frozen=True, slots=True)
class Idle:
    """Work on an idle session (/compact, /new's flush) is done for the newest message of its
    transcript: its audience, and its payer charged, in no run."""

    deps: TurnDeps
    session_id: str
    agent_id: str
    newest: str | None
    message: InboundMessage | None

    @classmethod
    async def of(
        cls, deps: TurnDeps, session_id: str, agent_id: str, transcript: Transcript
    ) -> Idle:
        newest = next((ids[-1] for ids in reversed(transcript.sources) if ids), None)
        found = await deps.store.messages_by_id([newest] if newest else [])
        return cls(deps, session_id, agent_id, newest, found[0].message if found else None)

    def bill(self, purpose: CallPurpose) -> Bill:
        payer = self.message.provenance.payer if self.message else None
        charge = Charge(self.session_id, self.agent_id, payer, None)

        return bill_of(self.deps.prices, charge, purpose)

    def flush(self, agent: AgentSpec | None) -> Flush | None:
        """The flush before compacting or leaving the session (None: the agent keeps no
        memory)."""
        if self.deps.memories is None or agent is None or agent.memory is None:
            return None
        memory = TurnMemory(
            self.deps.memories,
            audience_of(agent.memory, self.message),
            self.session_id,
            self.newest,
            source_of(self.message),
            agent.id,
        )
        bill = self.bill(CallPurpose.MEMORY_FLUSH)
        return MemoryFlush.of(memory, self.deps, agent.system_prompt, unguarded, bill)


def keeps_memory(rt: Host, session: Session) -> bool:
    """Whether the session's agent keeps memory (so /new flushes it)."""
    agent = rt.agents.get(session.record.agent_id)
    return rt.turn_deps.memories is not None and agent is not None and agent.memory is not None


def flush_on_leaving(rt: Host, session: Session) -> bool:
    """/new: in the background, once its turn (if any) is over, the model is asked to keep
    what should last of the session's conversation (the rows not compacted yet: what was
    compacted was flushed then). When no turn of it runs, recalls of the agent's memory wait for
    the flush (`Memories.settled`), so the new session's first turn sees what it kept; a turn
    still running (an approval may hold it for hours) would hold them too long. False: the
    agent keeps no memory."""
    agent = rt.agents.get(session.record.agent_id)
    memories = rt.turn_deps.memories
    if not keeps_memory(rt, session) or session.leaving:
        return False
    assert memories is not None and agent is not None and agent.memory is not None
    task = asyncio.get_running_loop().create_task(_leave(rt, session), name=f"leave-{session.id}")
    session.leaving = task
    if session.running is None:
        memories.settling(agent.memory, task)

    def done(_: asyncio.Task[None]) -> None:
        session.leaving = None

    task.add_done_callback(done)
    return True


async def _leave(rt: Host, session: Session) -> None:
    async with session.turn_lock:
        try:
            transcript = await rt.store.transcript(session.id)
            agent = rt.agents.get(session.record.agent_id)
            deps = replace(
                rt.turn_deps,
                provider=rt.models.between_turns(agent, session.id),
                budget=rt.models.budget(agent, rt.turn_deps.budget),
            )
            idle = await Idle.of(deps, session.id, session.record.agent_id, transcript)
            flush = idle.flush(agent)
            if flush is not None and transcript.rows:
                await flush(transcript, len(transcript.rows))
        except Exception:
            log.exception("memory flush on leaving failed", extra={"session_id": session.id})
        finally:
            rt.models.forget(session.id)  # its turns are over: where it stood goes too


def request_text(kept: Sequence[Memory]) -> str:
    """The flush's instruction, and what is kept already (so it is not kept twice)."""
    if not kept:
        return FLUSH_REQUEST
    lines = []
    for memory in kept:
        text = " ".join(memory.text.split())
        text = text if len(text) <= KEPT_CHARS else text[: KEPT_CHARS - 1] + "…"
        mark = UNTRUSTED_MARK if memory.source in UNTRUSTED else ""
        lines.append(f"- {memory.id}{mark}: {text}")
    return "\n".join([FLUSH_REQUEST, "", KEPT_HEADER, *lines])


def _ask(text: str) -> TranscriptMessage:
    return TranscriptMessage(role="user", blocks=[TextBlock(text=text)])
