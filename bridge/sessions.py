"""Conversations to sessions: one session per agent per conversation; `/new` starts afresh."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bridge.bindings import agent_for
from bridge.keyed_locks import KeyedLocks
from bridge.store.records import ConversationName
from bridge.store.store import BridgeStore
from bridge.store.transaction import BridgeTx
from bridge.types import Route
from config.schema import WorkspaceConfig
from runtime.engine import Runtime
from runtime.messages import QueueMode


def agent_key(workspace_id: str, agent_id: str) -> str:
    """The runtime's agent id: agents are configured per workspace."""
    return f"{workspace_id}/{agent_id}"


class Sessions:
    def __init__(self, runtime: Runtime, store: BridgeStore) -> None:
        self._runtime = runtime
        self._store = store
        self._by_conversation: dict[str, str] = {}
        self._route_of_session: dict[str, Route] = {}
        self._names: dict[str, ConversationName] = {}
        self._creating: KeyedLocks[str] = KeyedLocks()  # by conversation key

    async def load(self, workspace_id: str | None = None) -> None:
        """Every conversation's session, or (replicas, taking a workspace up before it is
        served here) the workspace's alone: the others' bindings here are left as they are."""
        for conversation in await self._store.conversations():
            if workspace_id in (None, conversation.route.workspace_id):
                self._by_conversation[conversation.key] = conversation.session_id
                self._route_of_session[conversation.session_id] = conversation.route
        names = await self._store.conversation_names()
        if workspace_id is None:
            self._names = names
        else:
            self._names.update({k: n for k, n in names.items() if n.workspace_id == workspace_id})

    def names(self) -> Mapping[str, ConversationName]:
        """How people name each conversation, by key, as its operators' messages told."""
        return self._names

    def note_name(self, tx: BridgeTx, name: ConversationName) -> None:
        """Keep what a message told of its conversation, in `tx` (the message's own), when
        it says something new: a name the platform left out stays as it was."""
        known = self._names.get(name.key)
        if known is not None:
            name = replace(
                name, title=name.title or known.title, person=name.person or known.person
            )
        if name != known:
            tx.name_conversation(name)
            self._names[name.key] = name

    def route_of(self, session_id: str) -> Route | None:
        """The conversation a session lives in (None for private children)."""
        return self._route_of_session.get(session_id)

    def session_of(self, route: Route) -> str | None:
        return self._by_conversation.get(route.home.conversation_key)

    async def session_for(
        self,
        route: Route,
        workspace: WorkspaceConfig,
        *,
        fresh: bool = False,
        direct: bool = False,
    ) -> str:
        """The conversation's session, created on first use (or anew, with `fresh`) for the
        agent bound there (`direct`: the conversation is a DM). An existing session keeps its
        agent when the bindings change; `/new` starts one with the agent bound now."""
        home = route.home
        key = home.conversation_key
        if not fresh and key in self._by_conversation:
            return self._by_conversation[key]
        # Two messages of a new conversation can arrive side by side (a slash command and a
        # DM are replayed in places of their own): the second finds the first one's session.
        async with self._creating.hold(key):
            if not fresh and key in self._by_conversation:
                return self._by_conversation[key]
            session_id = await self._runtime.create_session(
                agent_key(workspace.id, agent_for(workspace, home, direct=direct)),
                queue_mode=QueueMode(workspace.queue_mode),
                metadata={"conversation_key": key},
                # bound in the session's own transaction: a crash leaves neither half
                also=lambda w, created: self._store.join(w).bind_conversation(
                    key, created, workspace.id, home
                ),
            )
            self._by_conversation[key] = session_id
            self._route_of_session[session_id] = home
            return session_id
