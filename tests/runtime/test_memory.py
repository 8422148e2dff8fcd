"""Memory (issue 40): recall ranks what matches first; scopes are enforced by the store's
statements; a write is idempotent by its key; a newer memory hides the one it replaces; a
forgotten one leaves nothing findable but its tombstone; both engines rank alike."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runtime.clock import ManualClock
from runtime.memory import Memories
from runtime.memory_values import Audience, Memory, MemoryRefused, MemoryScope, MemorySource
from runtime.store import memory as stored
from runtime.store.database import Engine
from runtime.store.store import Store
from tests.fakes.anthropic_api import FakeAnthropic
from tests.postgres import fresh_database
from tests.runtime.helpers import open_runtime

AGENT = "acme/ops"
ALICE_DM = Audience(AGENT, "alice", private=True)
ALICE_IN_GROUP = Audience(AGENT, "alice", private=False)
BOB_DM = Audience(AGENT, "bob", private=True)
OTHER_AGENT = Audience("globex/ops", "alice", private=True)
DAY = 86_400.0


@pytest.fixture
async def store(db_path: Path | str) -> AsyncIterator[Store]:
    opened = await Store.open(db_path, clock=ManualClock())
    yield opened
    await opened.close()


def memories_of(store: Store) -> Memories:
    return Memories(store, store.clock)


async def keep(
    memories: Memories,
    audience: Audience,
    text: str,
    scope: MemoryScope | None = MemoryScope.AGENT,
    *,
    key: str | None = None,
    source: MemorySource = MemorySource.OPERATOR,
    supersedes: str | None = None,
) -> Memory:
    kept = await memories.remember(
        audience,
        text,
        scope,
        session_id="ses_1",
        message_id="msg_1",
        source=source,
        supersedes=supersedes,
        key=key or f"toolu_{text}",
    )
    return kept.memory


async def texts(memories: Memories, audience: Audience, query: str) -> list[str]:
    return [r.memory.text for r in await memories.recall(audience, query)]


async def test_recall_ranks_the_matching_memory_first(store: Store) -> None:
    memories = memories_of(store)
    await keep(memories, ALICE_DM, "The office plants are watered on Fridays.")
    deploy = await keep(memories, ALICE_DM, "Our deploy window is Tuesdays 14:00 UTC.")
    await keep(memories, ALICE_DM, "The staging database is rebuilt every night.")
    await keep(memories, ALICE_DM, "Deploy notes go to the #releases channel.")

    recalled = await memories.recall(ALICE_DM, "when is the deploy window?")
    assert recalled[0].memory.id == deploy.id
    assert recalled[0].score > recalled[1].score > 0
    assert recalled[1].memory.text == "Deploy notes go to the #releases channel."
    assert recalled[0].memory == deploy, "kept with its scope, source and where it came from"
    assert (deploy.session_id, deploy.message_id, deploy.source) == (
        "ses_1",
        "msg_1",
        MemorySource.OPERATOR,
    )
    assert await memories.recall(ALICE_DM, "an unrelated question about lunch") == []


async def test_an_operators_memory_is_seen_only_in_their_private_chats(store: Store) -> None:
    memories = memories_of(store)
    private = await keep(memories, ALICE_DM, "Alice's door code is 4711.", scope=None)
    assert private.scope is MemoryScope.OPERATOR and private.operator_id == "alice"
    shared = await keep(memories, ALICE_IN_GROUP, "The team door code changes monthly.", None)
    assert shared.scope is MemoryScope.AGENT and shared.operator_id is None

    assert await texts(memories, ALICE_DM, "door code") == [
        "Alice's door code is 4711.",
        "The team door code changes monthly.",
    ]
    for audience in (ALICE_IN_GROUP, BOB_DM, Audience(AGENT, None, private=False)):
        assert await texts(memories, audience, "door code") == [
            "The team door code changes monthly."
        ], audience
    assert await texts(memories, OTHER_AGENT, "door code") == []


async def test_the_operator_scope_is_refused_outside_a_private_chat(store: Store) -> None:
    memories = memories_of(store)
    for audience in (ALICE_IN_GROUP, Audience(AGENT, None, private=True)):
        with pytest.raises(MemoryRefused, match="only in a private chat"):
            await keep(memories, audience, "a secret", scope=MemoryScope.OPERATOR)
    with pytest.raises(MemoryRefused, match="empty"):
        await keep(memories, ALICE_DM, "   ")
    with pytest.raises(MemoryRefused, match="at most 2000 characters"):
        await keep(memories, ALICE_DM, "x" * 2001)
    assert await store.read_sql("SELECT id FROM memories") == []


async def test_a_write_is_idempotent_by_its_key(store: Store) -> None:
    memories = memories_of(store)
    first = await keep(memories, ALICE_DM, "Backups run at 02:00.", key="toolu_1")
    again = await keep(memories, ALICE_DM, "Backups run at 02:00.", key="toolu_1")
    assert again == first
    assert len(await store.read_sql("SELECT id FROM memories")) == 1


async def test_a_newer_memory_hides_the_one_it_replaces(store: Store) -> None:
    memories = memories_of(store)
    old = await keep(memories, ALICE_DM, "The deploy window is Mondays.")
    new = await keep(memories, ALICE_DM, "The deploy window is Tuesdays.", supersedes=old.id)
    assert new.supersedes == old.id
    assert await texts(memories, ALICE_DM, "deploy window") == ["The deploy window is Tuesdays."]
    with pytest.raises(MemoryRefused, match=f"already replaced by {new.id}"):
        await keep(memories, ALICE_DM, "The deploy window is Fridays.", supersedes=old.id)

    private = await keep(memories, ALICE_DM, "Alice prefers short answers.", scope=None)
    for audience in (ALICE_IN_GROUP, BOB_DM, OTHER_AGENT):
        with pytest.raises(MemoryRefused, match=f"no memory {private.id} to replace"):
            await keep(memories, audience, "Everyone prefers long answers.", supersedes=private.id)
    with pytest.raises(MemoryRefused, match="no memory mem_nothing to replace"):
        await keep(memories, ALICE_DM, "Anything.", supersedes="mem_nothing")
    assert await texts(memories, ALICE_DM, "answers") == ["Alice prefers short answers."]
    rows = await store.read_sql("SELECT id, superseded_by FROM memories ORDER BY created_at, id")
    assert {r["id"]: r["superseded_by"] for r in rows} == {
        old.id: new.id,
        new.id: None,
        private.id: None,
    }


async def index_holds(store: Store, word: str) -> int:
    """How many index entries hold `word`, read from the index itself."""
    if store.engine is Engine.SQLITE:
        sql = "SELECT COUNT(*) AS n FROM memories_index WHERE memories_index MATCH ?"
        [row] = await store.read_sql(sql, (f'"{word}"',))
    else:
        sql = "SELECT COUNT(*) AS n FROM memories WHERE words @@ plainto_tsquery('simple', ?)"
        [row] = await store.read_sql(sql, (word,))
    return int(row["n"])


async def test_a_forgotten_memory_leaves_nothing_findable_but_a_tombstone(store: Store) -> None:
    memories = memories_of(store)
    private = await keep(memories, ALICE_DM, "Alice's salary is confidential.", scope=None)
    await keep(memories, ALICE_DM, "Salary reviews happen in March.")
    assert await index_holds(store, "salary") == 2

    for audience in (ALICE_IN_GROUP, BOB_DM, OTHER_AGENT):
        assert await memories.forget(audience, private.id, "mallory") is None
    assert await memories.forget(ALICE_DM, "mem_nothing", "alice") is None
    assert await memories.forget(ALICE_DM, private.id, "alice") == private
    assert await memories.forget(ALICE_DM, private.id, "alice") is None, "gone already"

    assert await texts(memories, ALICE_DM, "salary") == ["Salary reviews happen in March."]
    assert await index_holds(store, "salary") == 1
    assert await index_holds(store, "confidential") == 0
    assert await store.read_sql("SELECT id FROM memories WHERE id = ?", (private.id,)) == []
    tombstones = await store.read_sql("SELECT * FROM memory_tombstones")
    assert [(t["id"], t["agent_id"], t["forgotten_by"]) for t in tombstones] == [
        (private.id, AGENT, "alice")
    ]
    assert tombstones[0]["forgotten_at"] == store.clock.wall()


async def test_recall_is_counted_and_weighs_recency_and_trust(store: Store) -> None:
    memories = memories_of(store)
    clock = store.clock
    assert isinstance(clock, ManualClock)
    older = await keep(memories, ALICE_DM, "The printer is on floor two.")
    quoted = await keep(
        memories, ALICE_DM, "The printer is on floor six.", source=MemorySource.QUOTE
    )
    await clock.advance(90 * DAY)
    newer = await keep(memories, ALICE_DM, "The printer is on floor one.")
    assert [r.memory for r in await memories.recall(ALICE_DM, "printer floor")] == [
        newer,
        older,
        quoted,
    ]
    rows = await store.read_sql("SELECT id, uses, last_used_at FROM memories")
    assert {(r["uses"], r["last_used_at"]) for r in rows} == {(1, clock.wall())}


async def test_the_runtime_keeps_memories_across_a_restart(
    anthropic_api: FakeAnthropic, db_path: Path | str
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    kept = await keep(rt.memories, ALICE_DM, "Our deploy window is Tuesdays 14:00 UTC.")
    await rt.close()
    again = await open_runtime(db_path, anthropic_api)
    try:
        [recalled] = await again.memories.recall(ALICE_DM, "deploy window")
        assert recalled.memory == kept
    finally:
        await again.close()


SAME_DATA = [
    ("Our deploy window is Tuesdays 14:00 UTC.", MemorySource.OPERATOR),
    ("The deploy of the billing service needs two approvals.", MemorySource.AGENT),
    ("A forwarded note says the deploy window moved to Fridays.", MemorySource.QUOTE),
    ("Deploy deploy deploy: the build log of last week.", MemorySource.TOOL),
    ("Lunch is at noon.", MemorySource.OPERATOR),
    ("The window cleaner comes on Tuesdays.", MemorySource.EVENT),
]


async def test_the_same_memories_rank_the_same_on_both_engines(sqlite_path: Path) -> None:
    answers = []
    for location in (sqlite_path, fresh_database()):
        clock = ManualClock()
        store = await Store.open(location, clock=clock)
        memories = Memories(store, clock)
        for text, source in SAME_DATA:
            await keep(memories, ALICE_DM, text, source=source)
            await clock.advance(DAY)
        recalled = await memories.recall(ALICE_DM, "When is the deploy window?", limit=10)
        answers.append([(r.memory.text, r.score) for r in recalled])
        await store.close()
    on_sqlite, on_postgresql = answers
    assert [t for t, _ in on_sqlite] == [t for t, _ in on_postgresql]
    assert [s for _, s in on_sqlite] == pytest.approx([s for _, s in on_postgresql])
    assert len(on_sqlite) == 5 and on_sqlite[0][0] == SAME_DATA[0][0]


async def test_sqlite_finds_a_word_inside_a_longer_one(sqlite_path: Path) -> None:
    store = await Store.open(sqlite_path, clock=ManualClock())
    try:
        memories = memories_of(store)
        await keep(memories, ALICE_DM, "我们的部署窗口是每周二下午两点")
        await keep(memories, ALICE_DM, "Deployments freeze over the holidays.")
        assert await texts(memories, ALICE_DM, "部署窗口") == ["我们的部署窗口是每周二下午两点"]
        assert await texts(memories, ALICE_DM, "deploy") == [
            "Deployments freeze over the holidays."
        ]
    finally:
        await store.close()


async def test_each_memory_read_on_sqlite_uses_an_index(sqlite_path: Path) -> None:
    """Recall starts from the text index and reads each candidate by its key; a memory is
    read by its id or its key, a list in order of an index (newest, oldest, least used), a
    tombstone by its origin; nothing scans the table or sorts what it found."""
    store = await Store.open(sqlite_path)
    await store.close()
    own = stored.Visible(AGENT, "alice")
    reads = [
        stored.search_sql(Engine.SQLITE, own, 1, newest=False),
        stored.search_sql(Engine.SQLITE, own, 1, newest=True),
        stored.one_sql(own)[0],
        stored.one_sql(stored.Visible(AGENT, None))[0],
        stored.BY_KEY,
        stored.newest_sql(own)[0],
        stored.newest_sql(stored.Visible(AGENT, None, every_scope=True))[0],
        stored.OLDEST_FIRST,
        stored.least_used_sql(AGENT, "agent", None)[0],
        stored.least_used_sql(AGENT, "operator", "alice")[0],
        stored.count_sql(AGENT, "agent", None)[0],
        stored.TOMBSTONED,
    ]
    with sqlite3.connect(sqlite_path) as conn:
        for sql in reads:
            plan = [
                r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", [None] * sql.count("?"))
            ]
            assert all(step.startswith("SEARCH") for step in plan[1:]), plan
            assert plan[0].startswith(("SEARCH", "SCAN memories_index VIRTUAL TABLE")), plan
            assert not [step for step in plan if "TEMP B-TREE" in step], plan
