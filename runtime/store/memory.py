"""Memories (`runtime.memory.Memories` reads and writes them through this module): a memory,
its text index and its tombstone are written in one transaction, so recall never reads a
stale index and a forgotten memory leaves nothing findable.

Who may see a memory is part of every statement's WHERE (`Visible`), never a filter after
reading: an agent's memories are its own; an operator's only in that operator's private
chats. SQLite finds candidates in an FTS5 table on the trigram tokenizer (a word inside a
longer one); PostgreSQL in a tsvector column ('simple': no language's stemming or stop
words) on a GIN index. Either hands a bounded number of candidates to the one ranker in
Python (`runtime/memory_ranking.py`): its own best by the query's rarer terms, and the newest
holding its common ones. A term held by very many memories is not ranked by, since the engine
would score each of them (at 100,000 memories, a query of common words took 100 ms)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.store.database import Engine, Row
from runtime.store.filters import marks
from runtime.store.writer import Writer

COLUMNS = (
    "m.id, m.agent_id, m.scope, m.operator_id, m.text, m.created_at, m.session_id,"
    " m.message_id, m.source, m.supersedes, m.superseded_by"
)
COMMON = 500  # memories holding a term, past which it is too common to rank candidates by
COMMON_FOR_S = 600.0  # how long a term found common is taken as common without counting it
COMMON_KEPT = 10_000  # common terms remembered so, at most
RECENT = 25  # of the memories holding only a query's common terms, the newest this many
BY_KEY = f"SELECT {COLUMNS} FROM memories m WHERE m.agent_id = ? AND m.key = ?"
ANY = "SELECT 1 FROM memories WHERE agent_id = ? LIMIT 1"


@dataclass(frozen=True, slots=True)
class Visible:
    """Which memories an audience may see: its agent's, of the agent scope, and of the
    operator scope only when `operator_id` is given (its owner, in a private chat); every one
    of the agent's for its admin (`every_scope`: the console)."""

    agent_id: str
    operator_id: str | None
    every_scope: bool = False

    def where(self) -> tuple[str, list[Any]]:
        if self.every_scope:
            return "m.agent_id = ?", [self.agent_id]
        if self.operator_id is None:
            return "m.agent_id = ? AND m.scope = 'agent'", [self.agent_id]
        return (
            "m.agent_id = ? AND (m.scope = 'agent' OR (m.scope = 'operator'"
            " AND m.operator_id = ?))",
            [self.agent_id, self.operator_id],
        )


@dataclass(frozen=True, slots=True)
class NewMemory:
    id: str
    agent_id: str
    scope: str
    operator_id: str | None
    text: str
    created_at: float
    session_id: str | None
    message_id: str | None
    source: str
    supersedes: str | None
    key: str


def one_sql(visible: Visible) -> tuple[str, list[Any]]:
    """The memory with an id (a parameter after these), if the audience may see it."""
    where, params = visible.where()
    return f"SELECT {COLUMNS} FROM memories m WHERE m.id = ? AND {where}", params


def newest_sql(visible: Visible) -> tuple[str, list[Any]]:
    """The current (not replaced) memories the audience may see, newest first; the limit is a
    parameter after these."""
    where, params = visible.where()
    return (
        f"SELECT {COLUMNS} FROM memories m WHERE {where} AND m.superseded_by IS NULL"
        " ORDER BY m.seq DESC LIMIT ?",
        params,
    )


OLDEST_FIRST = (
    f"SELECT {COLUMNS} FROM memories m WHERE m.agent_id = ? AND m.superseded_by IS NULL"
    " ORDER BY m.seq"
)


def scope_where(agent_id: str, scope: str, operator_id: str | None) -> tuple[str, list[Any]]:
    """One scope's memories of an agent: the agent's own, or one operator's."""
    if operator_id is None:
        return "m.agent_id = ? AND m.scope = ? AND m.operator_id IS NULL", [agent_id, scope]
    return "m.agent_id = ? AND m.scope = ? AND m.operator_id = ?", [agent_id, scope, operator_id]


def least_used_sql(agent_id: str, scope: str, operator_id: str | None) -> tuple[str, list[Any]]:
    """A scope's memories, the least used first, then the least recently used, then the
    oldest (a never used one has no `last_used_at`); the limit is a parameter after these.
    Ordered by the (one) operator too, so PostgreSQL reads it in the index's order."""
    where, params = scope_where(agent_id, scope, operator_id)
    return (
        f"SELECT {COLUMNS} FROM memories m WHERE {where}"
        " ORDER BY m.operator_id, m.uses, m.last_used_at, m.seq LIMIT ?",
        params,
    )


def count_sql(agent_id: str, scope: str, operator_id: str | None) -> tuple[str, list[Any]]:
    where, params = scope_where(agent_id, scope, operator_id)
    return f"SELECT COUNT(*) AS n FROM memories m WHERE {where}", params


TOMBSTONED = "SELECT id FROM memory_tombstones WHERE agent_id = ? AND origin = ?"


def search_sql(engine: Engine, visible: Visible, terms: int, newest: bool) -> str:
    """The memories the audience may see, not replaced, holding any of `terms` terms: the
    engine's best first, or the newest first. Parameters: `match_params`, then the
    audience's (`Visible.where`), then the limit."""
    where, _ = visible.where()
    if engine is Engine.SQLITE:
        order = "memories_index.rowid DESC" if newest else "memories_index.rank"
        return (
            f"SELECT {COLUMNS} FROM memories_index JOIN memories m"
            " ON m.seq = memories_index.rowid"
            f" WHERE memories_index MATCH ? AND {where} AND m.superseded_by IS NULL"
            f" ORDER BY {order} LIMIT ?"
        )
    query = " || ".join(["plainto_tsquery('simple', ?)"] * terms)
    order = "m.seq DESC" if newest else "ts_rank(m.words, q.query) DESC, m.id"
    return (
        f"WITH q AS (SELECT {query} AS query) SELECT {COLUMNS} FROM memories m, q"
        f" WHERE m.words @@ q.query AND {where} AND m.superseded_by IS NULL"
        f" ORDER BY {order} LIMIT ?"
    )


def match_params(engine: Engine, terms: Sequence[str]) -> list[str]:
    return [fts5_query(terms)] if engine is Engine.SQLITE else list(terms)


def counts_sql(engine: Engine, terms: int) -> str:
    """How many memories (of any agent) hold each term, counted up to a bound: a parameter
    pair each (the term, the bound). A counted-up-to bound reads at most that many index
    entries, however common the term."""
    if engine is Engine.SQLITE:
        holding = "SELECT 1 FROM memories_index WHERE memories_index MATCH ? LIMIT ?"
    else:
        holding = "SELECT 1 FROM memories WHERE words @@ plainto_tsquery('simple', ?) LIMIT ?"
    return "SELECT " + ", ".join(
        f"(SELECT COUNT(*) FROM ({holding}) AS h{i}) AS n{i}" for i in range(terms)
    )


def fts5_query(terms: Sequence[str]) -> str:
    """Any of the terms, each a phrase (a term is letters and digits only, never a quote)."""
    return " OR ".join(f'"{term}"' for term in terms)


class MemoryRows:
    """`shared`: other processes write the database too (replicas), so this one cannot know
    that an agent keeps no memory without asking (`any_of`)."""

    def __init__(
        self,
        rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]],
        engine: Engine,
        *,
        shared: bool,
    ) -> None:
        self._rows = rows
        self._engine = engine
        self._common: dict[str, float] = {}  # a term found common: until when (monotonic)
        self._shared = shared
        self._none: set[str] = set()  # agents found to keep no memory, none kept here since
        self._kept = 0  # memories this process has written (or tried to), for `any_of`

    async def any_of(self, agent_id: str) -> bool:
        """Whether the agent keeps any memory: asked once, then (where this process is the
        only writer) known until it keeps one, so a turn of an agent that keeps none reads
        nothing to recall (most agents, most of the time, at first)."""
        if agent_id in self._none:
            return False
        kept = self._kept
        found = bool(await self._rows(ANY, (agent_id,)))
        if not found and not self._shared and kept == self._kept:  # none kept meanwhile
            self._none.add(agent_id)
        return found

    def kept(self, agent_id: str) -> None:
        """A memory of the agent was written (once its transaction is over, whatever its
        outcome): `any_of` asks again."""
        self._kept += 1
        self._none.discard(agent_id)

    async def by_key(self, agent_id: str, key: str) -> Row | None:
        found = await self._rows(BY_KEY, (agent_id, key))
        return found[0] if found else None

    async def one(self, visible: Visible, memory_id: str) -> Row | None:
        sql, params = one_sql(visible)
        found = await self._rows(sql, [memory_id, *params])
        return found[0] if found else None

    async def newest(self, visible: Visible, limit: int) -> list[Row]:
        sql, params = newest_sql(visible)
        return await self._rows(sql, [*params, limit])

    async def oldest_first(self, agent_id: str) -> list[Row]:
        return await self._rows(OLDEST_FIRST, (agent_id,))

    async def count(self, agent_id: str, scope: str, operator_id: str | None) -> int:
        sql, params = count_sql(agent_id, scope, operator_id)
        [row] = await self._rows(sql, params)
        return int(row["n"])

    async def least_used(
        self, agent_id: str, scope: str, operator_id: str | None, limit: int
    ) -> list[Row]:
        sql, params = least_used_sql(agent_id, scope, operator_id)
        return await self._rows(sql, [*params, limit])

    async def tombstoned(self, agent_id: str, origin: str) -> bool:
        """A memory of this origin (see `runtime.memory_values.origin_of`) was forgotten."""
        return bool(await self._rows(TOMBSTONED, (agent_id, origin)))

    async def candidates(self, visible: Visible, terms: Sequence[str], limit: int) -> list[Row]:
        """The memories the audience may see, not replaced, holding any of `terms`: at most
        `limit` the engine ranks best by the query's rarer terms, and the newest holding its
        common ones (`RECENT`; `limit` when all are common). A common term is not ranked
        by: the engine would rank every memory that holds it."""
        if not terms:
            return []
        rare, common = await self._rarity(terms)
        found: dict[str, Row] = {}
        for some, newest, most in ((rare, False, limit), (common, True, RECENT if rare else limit)):
            if some:
                sql = search_sql(self._engine, visible, len(some), newest)
                where = visible.where()[1]
                for row in await self._rows(sql, [*match_params(self._engine, some), *where, most]):
                    found.setdefault(row["id"], row)
        return list(found.values())

    async def _rarity(self, terms: Sequence[str]) -> tuple[list[str], list[str]]:
        """The terms held by at most `COMMON` memories, and the others. A term found common
        lately is not counted again (counting it is the most it costs): it stays common
        until hundreds of memories holding it go."""
        now = time.monotonic()
        common = [t for t in terms if self._common.get(t, 0.0) > now]
        asked = [t for t in terms if t not in common]
        if not asked:
            return [], common
        params = [p for term in asked for p in (*match_params(self._engine, [term]), COMMON + 1)]
        [row] = await self._rows(counts_sql(self._engine, len(asked)), params)
        rare = []
        for i, term in enumerate(asked):
            if int(row[f"n{i}"]) <= COMMON:
                rare.append(term)
                continue
            if len(self._common) >= COMMON_KEPT:
                self._common.clear()
            self._common[term] = now + COMMON_FOR_S
            common.append(term)
        return rare, [t for t in terms if t in common]


def insert(w: Writer, engine: Engine, m: NewMemory) -> None:
    """The memory and (SQLite) its index entry."""
    w.write_sql(
        "INSERT INTO memories (id, agent_id, scope, operator_id, text, created_at, session_id,"
        " message_id, source, supersedes, key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            m.id,
            m.agent_id,
            m.scope,
            m.operator_id,
            m.text,
            m.created_at,
            m.session_id,
            m.message_id,
            m.source,
            m.supersedes,
            m.key,
        ),
    )
    if engine is Engine.SQLITE:
        w.write_sql(
            "INSERT INTO memories_index (rowid, text) SELECT seq, text FROM memories WHERE id = ?",
            (m.id,),
        )


def superseded(w: Writer, visible: Visible, old_id: str, new_id: str) -> None:
    """Mark `old_id` replaced by `new_id`: only if the audience may see it and nothing
    replaced it yet, else nothing of the transaction is kept (`ConditionFailedError`)."""
    where, params = visible.where()
    w.write_sql(
        f"UPDATE memories SET superseded_by = ? WHERE id IN (SELECT m.id FROM memories m"
        f" WHERE m.id = ? AND {where} AND m.superseded_by IS NULL)",
        (new_id, old_id, *params),
        expect=1,
    )


def forgotten(
    w: Writer, engine: Engine, visible: Visible, memory_id: str, by: str, origin: str | None
) -> None:
    """Remove the memory and its index entry, and leave its tombstone (with the digest of
    where it came from, never its text): only if the audience may see it, else nothing of
    the transaction is kept (`ConditionFailedError`)."""
    removed(w, engine, memory_id, visible)
    w.write_sql(
        "INSERT INTO memory_tombstones (id, agent_id, forgotten_at, forgotten_by, origin)"
        " VALUES (?, ?, ?, ?, ?)",
        (memory_id, visible.agent_id, w.now(), by, origin),
    )


def removed(w: Writer, engine: Engine, memory_id: str, visible: Visible) -> None:
    """Remove the memory and its index entry, if the audience may see it, else nothing of
    the transaction is kept (`ConditionFailedError`)."""
    where, params = visible.where()
    if engine is Engine.SQLITE:
        w.write_sql(
            "INSERT INTO memories_index (memories_index, rowid, text)"
            " SELECT 'delete', seq, text FROM memories WHERE id = ?",
            (memory_id,),
        )
    w.write_sql(
        f"DELETE FROM memories WHERE id IN (SELECT m.id FROM memories m"
        f" WHERE m.id = ? AND {where})",
        (memory_id, *params),
        expect=1,
    )


def used(w: Writer, memory_ids: Sequence[str], at: float) -> None:
    """These memories were recalled at `at` (what a later limit keeps first)."""
    w.write_sql(
        "UPDATE memories SET uses = uses + 1, last_used_at = ?"
        f" WHERE id IN ({marks(len(memory_ids))})",
        (at, *memory_ids),
    )
