"""Memory for people (issue 40): chat's `/memory` lists what its audience may see, newest
first; the console (the agent's admin) sees, searches, exports and forgets any memory of the
agent, of every scope, and nothing of another agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runtime.clock import ManualClock
from runtime.memory import Memories
from runtime.memory_values import Audience, Memory, MemoryScope, MemorySource
from runtime.store.store import Store

AGENT = "acme/ops"
ALICE_DM = Audience(AGENT, "alice", private=True)
ALICE_IN_GROUP = Audience(AGENT, "alice", private=False)
BOB_DM = Audience(AGENT, "bob", private=True)
OTHER_AGENT = Audience("globex/ops", "alice", private=True)


@pytest.fixture
async def store(db_path: Path | str) -> AsyncIterator[Store]:
    opened = await Store.open(db_path, clock=ManualClock())
    yield opened
    await opened.close()


@pytest.fixture
def memories(store: Store) -> Memories:
    return Memories(store, store.clock)


async def keep(
    memories: Memories,
    audience: Audience,
    text: str,
    scope: MemoryScope | None = MemoryScope.AGENT,
    supersedes: str | None = None,
) -> Memory:
    kept = await memories.remember(
        audience,
        text,
        scope,
        session_id="ses_1",
        message_id="msg_1",
        source=MemorySource.OPERATOR,
        supersedes=supersedes,
        key=f"toolu_{text}",
    )
    return kept.memory


async def kept_by_all(memories: Memories) -> dict[str, Memory]:
    return {
        "team": await keep(memories, ALICE_DM, "The team meets on Mondays."),
        "alice": await keep(memories, ALICE_DM, "Alice prefers short answers.", scope=None),
        "bob": await keep(memories, BOB_DM, "Bob is on call this week.", scope=None),
        "other": await keep(memories, OTHER_AGENT, "Globex meets on Mondays."),
    }


async def test_listed_is_what_the_audience_may_see_newest_first(memories: Memories) -> None:
    kept = await kept_by_all(memories)
    assert await memories.listed(ALICE_DM) == [kept["alice"], kept["team"]]
    assert await memories.listed(ALICE_IN_GROUP) == [kept["team"]]
    assert await memories.listed(BOB_DM) == [kept["bob"], kept["team"]]
    assert await memories.listed(ALICE_DM, limit=1) == [kept["alice"]]
    assert await memories.listed(OTHER_AGENT) == [kept["other"]]


async def test_a_replaced_memory_is_listed_no_more(memories: Memories) -> None:
    old = await keep(memories, ALICE_DM, "The team meets on Mondays.")
    new = await keep(memories, ALICE_DM, "The team meets on Tuesdays.", supersedes=old.id)
    assert await memories.listed(ALICE_DM) == [new]
    assert await memories.of_agent(AGENT) == [new]
    assert await memories.export(AGENT) == [new]
    assert await memories.one(AGENT, old.id) == old, "still shown, as the one replaced"


async def test_the_admin_sees_every_scope_of_the_agent_only(memories: Memories) -> None:
    kept = await kept_by_all(memories)
    assert await memories.of_agent(AGENT) == [kept["bob"], kept["alice"], kept["team"]]
    assert await memories.of_agent(AGENT, limit=2) == [kept["bob"], kept["alice"]]
    assert await memories.of_agent(AGENT, query="Bob call") == [kept["bob"]]
    assert await memories.of_agent(AGENT, query="mondays") == [kept["team"]]
    assert await memories.of_agent("globex/ops") == [kept["other"]]


async def test_the_admins_search_is_not_counted_as_use(store: Store, memories: Memories) -> None:
    kept = await kept_by_all(memories)
    await memories.of_agent(AGENT, query="mondays")
    rows = await store.read_sql("SELECT uses FROM memories WHERE id = ?", (kept["team"].id,))
    assert [r["uses"] for r in rows] == [0]


async def test_export_is_every_memory_of_the_agent_oldest_first(memories: Memories) -> None:
    kept = await kept_by_all(memories)
    assert await memories.export(AGENT) == [kept["team"], kept["alice"], kept["bob"]]
    assert await memories.export("globex/ops") == [kept["other"]]
    assert await memories.export("nobody/here") == []


async def test_one_is_the_agents_memory_of_any_scope(memories: Memories) -> None:
    kept = await kept_by_all(memories)
    assert await memories.one(AGENT, kept["bob"].id) == kept["bob"]
    assert await memories.one(AGENT, kept["other"].id) is None, "another agent's"
    assert await memories.one(AGENT, "mem_nothing") is None


async def test_the_admin_forgets_any_memory_of_the_agent(memories: Memories) -> None:
    kept = await kept_by_all(memories)
    assert await memories.forget_for_admin(AGENT, kept["other"].id, "root") is None
    assert await memories.forget_for_admin(AGENT, kept["bob"].id, "root") == kept["bob"]
    assert await memories.forget_for_admin(AGENT, kept["bob"].id, "root") is None
    assert await memories.one(AGENT, kept["bob"].id) is None
    assert await memories.listed(BOB_DM) == [kept["team"]]
    assert await memories.of_agent(AGENT, query="Bob call") == []
    assert await memories.export("globex/ops") == [kept["other"]]
