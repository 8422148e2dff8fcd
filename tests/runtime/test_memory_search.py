"""Memory search at scale (issue 40): a term held by very many memories is not ranked by
(the engine would score each of them); the query's rarer terms are, and of the memories
holding only its common terms the newest are candidates. So a question of common words and
one rare word still finds the memory of the rare word."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from runtime.clock import ManualClock
from runtime.memory import CANDIDATES, Memories
from runtime.memory_values import Audience, MemoryScope, MemorySource
from runtime.store import memory as stored
from runtime.store.store import Store

AGENT = "acme/ops"
TEAM = Audience(AGENT, None, private=False)
MANY = stored.COMMON + 100
ROUTINE = "The team will deploy the service this week, as planned in note {n}."


@pytest.fixture
async def store(db_path: Path | str) -> AsyncIterator[Store]:
    opened = await Store.open(db_path, clock=ManualClock(start=1_800_000_000.0))
    yield opened
    await opened.close()


async def fill(store: Store, texts: list[str]) -> None:
    """Memories of the agent, the first oldest, written in one transaction."""
    async with store.write() as w:
        for n, text in enumerate(texts):
            memory = stored.NewMemory(
                id=f"mem_{n:06d}",
                agent_id=AGENT,
                scope=MemoryScope.AGENT,
                operator_id=None,
                text=text,
                created_at=store.clock.wall() - (len(texts) - n) * 60.0,
                session_id="ses_1",
                message_id=f"msg_{n}",
                source=MemorySource.OPERATOR,
                supersedes=None,
                key=f"k{n}",
            )
            stored.insert(w, store.engine, memory)


async def test_common_words_with_a_rare_one_find_the_rare_memory(store: Store) -> None:
    keys = "The team keeps the spare keys of the service in the blue cabinet."
    await fill(store, [keys] + [ROUTINE.format(n=n) for n in range(MANY)])
    memories = Memories(store, store.clock)
    recalled = await memories.recall(
        TEAM, "Will the team deploy the service? Where is the cabinet?"
    )
    assert recalled[0].memory.text == keys, "the oldest of all, held by the rare word"
    assert len(recalled) == 5


async def test_a_query_of_common_words_ranks_the_newest_memories_holding_them(
    store: Store,
) -> None:
    """Ranking every memory that holds a common word is what the engine is spared: the
    oldest memory, however well it matches, is not among the newest candidates."""
    oldest = "Team team team: the team deploy team service team."
    await fill(store, [oldest] + [ROUTINE.format(n=n) for n in range(MANY)])
    memories = Memories(store, store.clock)
    recalled = await memories.recall(TEAM, "the team deploy service", limit=CANDIDATES)
    assert len(recalled) == CANDIDATES
    assert oldest not in [r.memory.text for r in recalled]
    newest = sorted((r.memory.id for r in recalled), reverse=True)
    assert newest == [f"mem_{n:06d}" for n in range(MANY, MANY - CANDIDATES, -1)]
