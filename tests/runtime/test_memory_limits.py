"""Memory bounded and forgettable (issue 40): a full scope removes its least used and oldest
memories in the same transaction as the one kept, says which, and audits it; forgetting is
audited and leaves a tombstone so the same message does not teach the same text again."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runtime.clock import ManualClock
from runtime.memory import Memories
from runtime.memory_values import (
    Audience,
    Kept,
    MemoryLimits,
    MemoryRefused,
    MemoryScope,
    MemorySource,
)
from runtime.store.store import Store

AGENT = "acme/ops"
ALICE_DM = Audience(AGENT, "alice", private=True)
BOB_DM = Audience(AGENT, "bob", private=True)


@pytest.fixture
async def store(db_path: Path | str) -> AsyncIterator[Store]:
    opened = await Store.open(db_path, clock=ManualClock())
    yield opened
    await opened.close()


@pytest.fixture
def memories(store: Store) -> Memories:
    return Memories(store, store.clock, MemoryLimits(agent=3, operator=2))


async def keep(
    memories: Memories,
    audience: Audience,
    text: str,
    scope: MemoryScope | None = MemoryScope.AGENT,
    *,
    message_id: str = "msg_1",
    supersedes: str | None = None,
    key: str | None = None,
) -> Kept:
    return await memories.remember(
        audience,
        text,
        scope,
        session_id="ses_1",
        message_id=message_id,
        source=MemorySource.OPERATOR,
        supersedes=supersedes,
        key=key or f"toolu_{text}",
    )


async def ledger(store: Store, event_type: str) -> list[dict[str, object]]:
    rows = await store.read_sql(
        "SELECT data FROM events WHERE type = ? ORDER BY seq", (event_type,)
    )
    return [json.loads(r["data"]) for r in rows]


async def test_a_full_scope_removes_the_least_used_and_oldest(
    store: Store, memories: Memories
) -> None:
    first = (await keep(memories, ALICE_DM, "Lunch is at noon.")).memory
    used = (await keep(memories, ALICE_DM, "The wiki lives at wiki.acme.test.")).memory
    third = (await keep(memories, ALICE_DM, "Standup is at nine.")).memory
    assert [r.memory for r in await memories.recall(ALICE_DM, "wiki")] == [used]

    fourth = await keep(memories, ALICE_DM, "Payroll runs on the 25th.")
    assert fourth.evicted == (first,), "never used, and the oldest"
    fifth = await keep(memories, ALICE_DM, "Deploys happen on Tuesdays.")
    assert fifth.evicted == (third,), "the one recalled stays"
    assert await memories.export(AGENT) == [used, fourth.memory, fifth.memory]
    assert await memories.recall(ALICE_DM, "lunch noon") == [], "its index entry went too"

    assert await ledger(store, "memory_evicted") == [
        {
            "agent_id": AGENT,
            "scope": "agent",
            "operator_id": None,
            "limit": 3,
            "memory_ids": [m.id],
            "kept_id": kept.memory.id,
        }
        for m, kept in ((first, fourth), (third, fifth))
    ]


async def test_each_operators_scope_is_bounded_apart(memories: Memories) -> None:
    team = [(await keep(memories, ALICE_DM, f"Team fact {n}.")).memory for n in range(3)]
    alice = [(await keep(memories, ALICE_DM, f"Alice fact {n}.", None)).memory for n in range(2)]
    bob = await keep(memories, BOB_DM, "Bob fact.", None)
    assert bob.evicted == ()
    more = await keep(memories, ALICE_DM, "Alice fact 2.", None)
    assert more.evicted == (alice[0],)
    assert await memories.export(AGENT) == [*team, alice[1], bob.memory, more.memory]


async def test_remember_still_answers_the_memory_and_a_repeat_evicts_nothing(
    memories: Memories,
) -> None:
    for n in range(3):
        await keep(memories, ALICE_DM, f"Fact {n}.")
    kept = await memories.remember(
        ALICE_DM,
        "Fact 3.",
        MemoryScope.AGENT,
        session_id="ses_1",
        message_id="msg_1",
        source=MemorySource.OPERATOR,
        key="toolu_again",
    )
    assert [m.text for m in await memories.export(AGENT)] == ["Fact 1.", "Fact 2.", "Fact 3."]
    again = await keep(memories, ALICE_DM, "Fact 3.", key="toolu_again")
    assert again == Kept(kept.memory)


async def test_the_memory_replaced_is_never_the_one_evicted(memories: Memories) -> None:
    old = (await keep(memories, ALICE_DM, "The team meets on Mondays.")).memory
    await keep(memories, ALICE_DM, "Fact 1.")
    await keep(memories, ALICE_DM, "Fact 2.")
    new = await keep(memories, ALICE_DM, "The team meets on Tuesdays.", supersedes=old.id)
    assert [m.text for m in new.evicted] == ["Fact 1."]
    assert await memories.one(AGENT, old.id) is not None


async def test_a_forgotten_message_does_not_teach_the_same_text_again(
    store: Store, memories: Memories
) -> None:
    told = (await keep(memories, ALICE_DM, "Alice's pager code is 4411.", None)).memory
    assert await memories.forget(ALICE_DM, told.id, "alice") == told
    with pytest.raises(MemoryRefused, match="forgotten on purpose"):
        await keep(memories, ALICE_DM, "Alice's pager code is 4411.", None, key="toolu_later")
    with pytest.raises(MemoryRefused, match="forgotten on purpose"):
        await keep(memories, ALICE_DM, "Alice's pager code is 4411.", None)  # its tool call again
    again = await keep(memories, ALICE_DM, "Alice's pager code is 4411.", None, message_id="msg_2")
    assert again.memory.text == told.text, "said again, in a new message"

    assert await memories.forget_for_admin(AGENT, again.memory.id, "root") == again.memory
    tombstones = await store.read_sql("SELECT origin FROM memory_tombstones")
    assert all(t["origin"] and "4411" not in t["origin"] for t in tombstones)
    assert await ledger(store, "memory_forgotten") == [
        {
            "memory_id": m.id,
            "agent_id": AGENT,
            "scope": "operator",
            "operator_id": "alice",
            "by": by,
        }
        for m, by in ((told, "alice"), (again.memory, "root"))
    ]
    events = await store.read_sql("SELECT data FROM events")
    assert not [e for e in events if "4411" in e["data"]], "the ledger never holds the text"


async def test_memories_kept_at_once_into_a_full_scope_each_evict_their_own(
    memories: Memories,
) -> None:
    """Both see the same least used memory; the second to commit finds it gone, looks
    again and removes the next: the scope stays at its limit."""
    held = [(await keep(memories, ALICE_DM, f"Fact {n}.")).memory for n in range(3)]
    first, second = await asyncio.gather(
        keep(memories, ALICE_DM, "Fact 3."), keep(memories, ALICE_DM, "Fact 4.")
    )
    assert {first.evicted, second.evicted} == {(held[0],), (held[1],)}
    oldest, *kept = await memories.export(AGENT)
    assert oldest == held[2]
    assert sorted(kept, key=lambda m: m.text) == [first.memory, second.memory], "either first"
