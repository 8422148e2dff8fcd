"""/memory and /forget (issue 40): what the agent keeps across sessions, as the conversation
they are typed in may see it. The audience is the conversation's: the agent bound there, the
operator who asks, privately only in a DM. So a group never lists an operator's private
memory, even when its owner asks there, since others read the answer; the store enforces it."""

from __future__ import annotations

from datetime import UTC, datetime

from bridge import texts
from bridge.bindings import agent_for
from bridge.sessions import Sessions, agent_key
from bridge.types import Answer, Button, Route
from config.schema import WorkspaceConfig
from runtime.engine import Runtime
from runtime.memory_values import Audience, Memory

LISTED = 10  # memories in one answer, each with a Forget button
SHOWN_TEXT = 200  # characters of a memory's text in its line
LABEL_TEXT = 24  # characters of its text in its button's label


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def line(memory: Memory) -> str:
    """One memory as /memory lists it: id, scope, date, where it came from, its text."""
    return texts.MEMORY_LINE.format(
        id=memory.id,
        scope=texts.MEMORY_SCOPES[memory.scope.value],
        date=datetime.fromtimestamp(memory.created_at, UTC).strftime("%Y-%m-%d"),
        source=texts.MEMORY_SOURCES[memory.source.value],
        text=_cut(memory.text, SHOWN_TEXT),
    )


def listing(memories: list[Memory], query: str, *, direct: bool) -> Answer:
    """The memories with a Forget button each (the press types `/forget ID`)."""
    if not memories:
        none = texts.MEMORY_NONE_FOUND.format(query=query) if query else texts.MEMORY_NONE
        return Answer(none if direct else f"{none} {texts.MEMORY_PRIVATE_HINT}")
    head = (
        texts.MEMORY_FOUND.format(query=query, count=len(memories))
        if query
        else texts.MEMORY_NEWEST.format(count=len(memories))
    )
    lines = [head, *(line(m) for m in memories), "", texts.MEMORY_FORGET_HINT]
    if not direct:
        lines.append(texts.MEMORY_PRIVATE_HINT)
    buttons = tuple(
        Button(
            texts.MEMORY_FORGET_BUTTON.format(text=_cut(m.text, LABEL_TEXT)),
            f"/forget {m.id}",
            row,
        )
        for row, m in enumerate(memories)
    )
    return Answer("\n".join(lines), buttons)


class MemoryCommands:
    def __init__(self, runtime: Runtime, sessions: Sessions) -> None:
        self._runtime = runtime
        self._sessions = sessions

    def audience(
        self, route: Route, workspace: WorkspaceConfig, operator_id: str, *, direct: bool
    ) -> Audience:
        """The conversation's: its session's agent (else the one bound there now), the
        operator who asks, private only in a DM."""
        session_id = self._sessions.session_of(route)
        if session_id is not None:
            agent_id = self._runtime.session(session_id).agent_id
        else:
            agent_id = agent_key(workspace.id, agent_for(workspace, route.home, direct=direct))
        return Audience(agent_id, operator_id, direct)

    async def memory(
        self,
        route: Route,
        workspace: WorkspaceConfig,
        query: str,
        *,
        operator_id: str,
        direct: bool,
    ) -> Answer:
        """`/memory`: the newest this conversation may see; `/memory words`: a search."""
        audience = self.audience(route, workspace, operator_id, direct=direct)
        memories = self._runtime.memories
        if query:
            found = [r.memory for r in await memories.recall(audience, query, LISTED)]
        else:
            found = await memories.listed(audience, LISTED)
        return listing(found, query, direct=direct)

    async def forget(
        self,
        route: Route,
        workspace: WorkspaceConfig,
        memory_id: str,
        *,
        operator_id: str,
        direct: bool,
    ) -> str:
        """`/forget ID`: only a memory this conversation may see (a group cannot forget an
        operator's private one)."""
        memory_id = memory_id.strip()
        if not memory_id or " " in memory_id:
            return texts.FORGET_USAGE
        audience = self.audience(route, workspace, operator_id, direct=direct)
        gone = await self._runtime.memories.forget(audience, memory_id, f"/forget by {operator_id}")
        if gone is None:
            return texts.FORGET_NONE.format(id=memory_id)
        return texts.FORGOTTEN.format(id=gone.id, text=_cut(gone.text, SHOWN_TEXT // 2))
