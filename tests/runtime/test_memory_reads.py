"""What a turn of an agent that keeps memory reads to recall (issue 45: CPU per turn): while
the agent keeps no memory, nothing (it was asked once), and never its message again; a memory
kept is offered on the next turn all the same. Where replicas share the database, whether an
agent keeps any is asked every time, since another process may have kept one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runtime.engine import Runtime
from runtime.memory_values import MemorySource
from runtime.store.database import Engine, Row
from runtime.store.memory import ANY, MemoryRows
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.test_memory_turns import (
    ALICE_PRIVATE,
    DEPLOY,
    dm,
    memory_runtime,
    offered_in,
    turn,
)


def reads_of(rt: Runtime) -> list[str]:
    """Every statement the store's reads run from now on."""
    seen: list[str] = []
    db: Any = rt.store.db
    rows = db.rows

    async def counted(sql: str, params: Sequence[Any] = ()) -> list[Row]:
        seen.append(sql)
        return list(await rows(sql, params))

    db.rows = counted
    return seen


async def test_a_turn_of_an_agent_that_keeps_no_memory_reads_nothing_to_recall(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [text("Hello."), text("Hello again."), text("Tuesdays.")]
    rt = await memory_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await turn(rt, dm("Hi there, what do you know about deploys?"))
    seen = reads_of(rt)
    await turn(rt, dm("And about the deploy window?"))
    # Replicas (PostgreSQL) ask whether the agent keeps any, once a turn: another may keep one.
    expected = [ANY] if rt.store.db.shared else []
    assert [sql for sql in seen if "memories" in sql] == expected, seen
    assert not [sql for sql in seen if sql.startswith("SELECT * FROM messages WHERE id IN")], (
        "the turn's message is not read again"
    )

    await rt.memories.remember(
        ALICE_PRIVATE,
        DEPLOY,
        None,
        session_id=None,
        message_id=None,
        source=MemorySource.OPERATOR,
        key="k1",
    )
    await turn(rt, dm("When is the deploy window?"))
    assert DEPLOY in offered_in(anthropic_api.requests[-1]), "kept since: offered"


async def test_a_memory_kept_while_the_agent_was_asked_about_is_not_missed() -> None:
    """The read that found none began before a memory's commit and ended after it."""
    memories = MemoryRows(lambda sql, params: answer(sql), Engine.SQLITE, shared=False)
    asked: list[str] = []

    async def answer(sql: str) -> list[Row]:
        asked.append(sql)
        if len(asked) == 1:
            memories.kept("acme/assistant")  # committed while this read was under way
        return []

    assert await memories.any_of("acme/assistant") is False
    assert await memories.any_of("acme/assistant") is False
    assert asked == [ANY, ANY], "asked again: the first answer may be stale"
    assert await memories.any_of("acme/assistant") is False
    assert asked == [ANY, ANY], "then known"


async def test_replicas_ask_whether_an_agent_keeps_memory_every_time() -> None:
    asked: list[str] = []

    async def answer(sql: str, params: Sequence[Any]) -> list[Row]:
        asked.append(sql)
        return []

    memories = MemoryRows(answer, Engine.POSTGRESQL, shared=True)
    for _ in range(3):
        assert await memories.any_of("acme/assistant") is False
    assert asked == [ANY] * 3
