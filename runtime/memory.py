"""Memory that outlives a session (issue 40): what an agent was told or concluded, kept in the
store with where it came from, recalled by relevance, replaced by a newer memory (never
edited in place) and truly forgettable.

Who may see a memory is decided by the store's statements (`runtime/store/memory.py`), not
by a prompt: an agent's memories are its own; one of the operator scope (what one person
told the agent) only in that person's private chats. A group chat never sees one, even when
its owner asks there, since others read the answer.

Bounded: a full scope makes room for a new memory by removing its least used and oldest
(`MemoryLimits`; `Memories.remember` returns which, to tell the operator). Forgetting and
removing are audited in the ledger; a forgotten memory's tombstone keeps the same message
from teaching the same text again."""

from __future__ import annotations

import asyncio
import logging

from runtime.clock import Clock
from runtime.errors import ConditionFailedError, StoreConflictError
from runtime.events import Event
from runtime.ids import new_id
from runtime.memory_ranking import Doc, scores, terms_of
from runtime.memory_values import (
    TRUSTED,
    Audience,
    Kept,
    Memory,
    MemoryLimits,
    MemoryRefused,
    MemoryScope,
    MemorySource,
    Recalled,
    checked_text,
    origin_of,
    scope_for,
)
from runtime.payloads import MemoryEvicted, MemoryForgotten
from runtime.store import memory as stored
from runtime.store.database import Row
from runtime.store.store import Store

log = logging.getLogger(__name__)

CANDIDATES = 100  # the most the database hands the ranker, its own best first
ATTEMPTS = 3  # to keep a memory while others change the same scope
SETTLE_S = 60.0  # a recall waits for a flush under way at most this long
LESS_TRUSTED = 0.85  # the rank weight of a memory of text from elsewhere (a quote, a tool's)


def _memory(r: Row) -> Memory:
    return Memory(
        id=r["id"],
        agent_id=r["agent_id"],
        scope=MemoryScope(r["scope"]),
        operator_id=r["operator_id"],
        text=r["text"],
        created_at=r["created_at"],
        session_id=r["session_id"],
        message_id=r["message_id"],
        source=MemorySource(r["source"]),
        supersedes=r["supersedes"],
    )


class Memories:
    """Remember, recall and forget, for one audience at a time."""

    def __init__(self, store: Store, clock: Clock, limits: MemoryLimits | None = None) -> None:
        self._store = store
        self._clock = clock
        self._default = limits or MemoryLimits()
        self.limits: dict[str, MemoryLimits] = {}  # by agent (its config's), else the default
        self._rows = store.memories
        self._settling: dict[str, set[asyncio.Task[None]]] = {}  # flushes under way, by agent

    def settling(self, agent_id: str, flush: asyncio.Task[None]) -> None:
        """A flush of `agent_id`'s memory is under way (a /new's): recalls wait for it."""
        pending = self._settling.setdefault(agent_id, set())
        pending.add(flush)
        flush.add_done_callback(pending.discard)

    async def settled(self, agent_id: str, timeout_s: float = SETTLE_S) -> None:
        """Until the flushes of `agent_id`'s memory under way are over (at most `timeout_s`:
        a recall is never held longer; it then sees what was kept so far)."""
        pending = self._settling.get(agent_id)
        if not pending:
            return
        _, late = await asyncio.wait(set(pending), timeout=timeout_s)
        if late:
            log.warning(
                "recall did not wait for a memory flush any longer",
                extra={"agent_id": agent_id, "flushes": len(late), "waited_s": timeout_s},
            )

    async def remember(
        self,
        audience: Audience,
        text: str,
        scope: MemoryScope | None,
        *,
        session_id: str | None,
        message_id: str | None,
        source: MemorySource,
        supersedes: str | None = None,
        key: str,
    ) -> Kept:
        """Keep a memory (or return the one `key` already wrote), and what it removed from a
        full scope. `supersedes` names the memory it replaces, which then is never recalled:
        it must be one this audience can see and nothing replaced yet. Raises MemoryRefused
        saying why it was not kept (also: the same message's same text was forgotten)."""
        already = await self._rows.by_key(audience.agent_id, key)
        if already is not None:
            return Kept(_memory(already))
        chosen = scope_for(audience, scope)
        memory = Memory(
            id=new_id("mem"),
            agent_id=audience.agent_id,
            scope=chosen,
            operator_id=audience.operator_id if chosen is MemoryScope.OPERATOR else None,
            text=self._store.secrets.mask(checked_text(text)),
            created_at=self._clock.wall(),
            session_id=session_id,
            message_id=message_id,
            source=source,
            supersedes=supersedes,
        )
        await self._learnable(memory)
        for _ in range(ATTEMPTS):
            if supersedes is not None:
                await self._replaceable(audience, supersedes)
            evicting = await self._over_limit(memory)
            try:
                await self._write(memory, key, audience.visible, evicting)
            except StoreConflictError:
                raced = await self._rows.by_key(audience.agent_id, key)
                if raced is None:
                    raise
                return Kept(_memory(raced))
            except ConditionFailedError:
                continue  # replaced, forgotten or evicted meanwhile: look again
            return Kept(memory, evicting)
        raise MemoryRefused("memory changed while this was kept; remember it again")

    async def _learnable(self, memory: Memory) -> None:
        origin = origin_of(memory.session_id, memory.message_id, memory.text)
        if origin is not None and await self._rows.tombstoned(memory.agent_id, origin):
            raise MemoryRefused(
                "this was forgotten on purpose: the same text from the same message was kept "
                "once and then forgotten, so it is not learned from that message again"
            )

    async def _over_limit(self, memory: Memory) -> tuple[Memory, ...]:
        """What keeping `memory` removes from its scope: the least used and oldest beyond
        the limit, never the memory it replaces."""
        limit = self._limit_of(memory)
        args = (memory.agent_id, memory.scope.value, memory.operator_id)
        over = await self._rows.count(*args) + 1 - limit
        if over <= 0:
            return ()
        found = await self._rows.least_used(*args, over + 1)
        return tuple(_memory(r) for r in found if r["id"] != memory.supersedes)[:over]

    def _limit_of(self, memory: Memory) -> int:
        return self.limits.get(memory.agent_id, self._default).of(memory.scope)

    async def _write(
        self, memory: Memory, key: str, visible: stored.Visible, evicting: tuple[Memory, ...]
    ) -> None:
        engine = self._store.engine
        try:
            async with self._store.write() as w:
                stored.insert(w, engine, _new(memory, key))
                if memory.supersedes is not None:
                    stored.superseded(w, visible, memory.supersedes, memory.id)
                for gone in evicting:
                    stored.removed(w, engine, gone.id, _every(memory.agent_id))
                if evicting:
                    evicted = MemoryEvicted(
                        agent_id=memory.agent_id,
                        scope=memory.scope.value,
                        operator_id=memory.operator_id,
                        limit=self._limit_of(memory),
                        memory_ids=[m.id for m in evicting],
                        kept_id=memory.id,
                    )
                    w.emit(Event(evicted, memory.session_id))
        finally:
            self._rows.kept(memory.agent_id)

    async def _replaceable(self, audience: Audience, memory_id: str) -> None:
        found = await self._rows.one(audience.visible, memory_id)
        if found is None:
            raise MemoryRefused(
                f"there is no memory {memory_id} to replace here; recall to find its id, "
                "or remember without replacing"
            )
        if found["superseded_by"] is not None:
            raise MemoryRefused(
                f"memory {memory_id} was already replaced by {found['superseded_by']}; "
                "replace that one instead"
            )

    async def recall(self, audience: Audience, query: str, limit: int = 5) -> list[Recalled]:
        """The memories this audience may see that best match `query`, best first."""
        now = self._clock.wall()
        ranked = await self._ranked(audience.visible, query, limit, now)
        if ranked:
            async with self._store.write() as w:
                stored.used(w, [r.memory.id for r in ranked], now)
        return ranked

    async def _ranked(
        self, visible: stored.Visible, query: str, limit: int, now: float
    ) -> list[Recalled]:
        terms = terms_of(query)
        if not terms or not await self._rows.any_of(visible.agent_id):
            return []
        found = [_memory(r) for r in await self._rows.candidates(visible, terms, CANDIDATES)]
        found.sort(key=lambda m: m.id)  # the ranker sees them alike from either engine
        docs = [
            Doc(m.text, m.created_at, 1.0 if m.source in TRUSTED else LESS_TRUSTED) for m in found
        ]
        return sorted(
            (Recalled(m, s) for m, s in zip(found, scores(terms, docs, now), strict=True) if s > 0),
            key=lambda r: (-r.score, r.memory.id),
        )[:limit]

    async def listed(self, audience: Audience, limit: int = 20) -> list[Memory]:
        """The current memories this audience may see, newest first (chat's `/memory`)."""
        return [_memory(r) for r in await self._rows.newest(audience.visible, limit)]

    async def of_agent(
        self, agent_id: str, query: str | None = None, limit: int = 100
    ) -> list[Memory]:
        """Every current memory of the agent, of every scope (its admin's view, the console):
        those matching `query` best first when given, else newest first. Not counted as used."""
        every = _every(agent_id)
        if query is None:
            return [_memory(r) for r in await self._rows.newest(every, limit)]
        ranked = await self._ranked(every, query, limit, self._clock.wall())
        return [r.memory for r in ranked]

    async def export(self, agent_id: str) -> list[Memory]:
        """Every current memory of the agent, of every scope, oldest first."""
        return [_memory(r) for r in await self._rows.oldest_first(agent_id)]

    async def one(self, agent_id: str, memory_id: str) -> Memory | None:
        """The agent's memory with this id (of any scope, replaced or not), if it is held."""
        found = await self._rows.one(_every(agent_id), memory_id)
        return None if found is None else _memory(found)

    async def forget(self, audience: Audience, memory_id: str, by: str) -> Memory | None:
        """Remove the memory, its index entry with it, leaving a tombstone (the id, who, when);
        None when no memory this audience can see has that id."""
        return await self._forget(audience.visible, memory_id, by)

    async def forget_for_admin(self, agent_id: str, memory_id: str, by: str) -> Memory | None:
        """The agent's admin forgets any of its memories, of any scope, as `forget` does."""
        return await self._forget(_every(agent_id), memory_id, by)

    async def _forget(self, visible: stored.Visible, memory_id: str, by: str) -> Memory | None:
        found = await self._rows.one(visible, memory_id)
        if found is None:
            return None
        memory = _memory(found)
        origin = origin_of(memory.session_id, memory.message_id, memory.text)
        forgotten = MemoryForgotten(
            memory_id=memory.id,
            agent_id=memory.agent_id,
            scope=memory.scope.value,
            operator_id=memory.operator_id,
            by=by,
        )
        try:
            async with self._store.write() as w:
                stored.forgotten(w, self._store.engine, visible, memory_id, by, origin)
                w.emit(Event(forgotten))
        except ConditionFailedError:
            return None  # forgotten meanwhile
        return memory


def _every(agent_id: str) -> stored.Visible:
    return stored.Visible(agent_id, None, every_scope=True)


def _new(m: Memory, key: str) -> stored.NewMemory:
    return stored.NewMemory(
        id=m.id,
        agent_id=m.agent_id,
        scope=m.scope,
        operator_id=m.operator_id,
        text=m.text,
        created_at=m.created_at,
        session_id=m.session_id,
        message_id=m.message_id,
        source=m.source,
        supersedes=m.supersedes,
        key=key,
    )
