"""The reads run per message, per turn or per delivery, and the pruning deletes, each use an
index: none scans a whole table. The statements are the store modules' own constants, planned
on a database migrated by the store itself."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

import pytest

from bridge.store import buttons as bridge_buttons
from bridge.store import store as bridge_store
from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
from runtime.store import approvals, history, hot_reads, retention, wakeups
from runtime.store.store import Store
from runtime.store.usage import UsageFilter, total_sql

DAY = (1_795_734_000.0, 1_795_820_400.0)  # a day in Berlin: whole quarters


def budget_sql(**which: str) -> str:
    return total_sql(UsageFilter(*DAY, **which))[0]


# A table read row by row: `SCAN events`, unlike `SCAN events USING INDEX ...` or a scan of
# a subquery's few rows (`SCAN (subquery-1)`).
FULL_SCAN = re.compile(r"^SCAN \w+$")

STATEMENTS = {
    "transcript: latest compaction": hot_reads.LATEST_COMPACTION,
    "transcript: rows after it": hot_reads.TRANSCRIPT_AFTER,
    "first_message_of_run": hot_reads.FIRST_MESSAGE_OF_RUN,
    "latest_run": hot_reads.LATEST_RUN,
    "run": hot_reads.RUN,
    "events_after": hot_reads.EVENTS_AFTER,
    "events_after (limit)": hot_reads.EVENTS_AFTER_LIMIT,
    "seen (one id)": bridge_store.seen_sql(1),
    "seen (three ids)": bridge_store.seen_sql(3),
    "refusal_replied_at": bridge_store.REFUSAL_REPLIED_AT,
    "cursor": bridge_store.CURSOR,
    "next_intent": bridge_store.NEXT_INTENT,
    "prune events": retention.PRUNE_EVENTS,
    "prune inbound_seen": bridge_store.PRUNE_SEEN,
    "prune deliveries": bridge_store.PRUNE_DELIVERIES,
    "prune refusals": bridge_store.PRUNE_REFUSALS,
    "notification_at": bridge_store.NOTIFICATION_AT,
    "decision_at": bridge_store.DECISION_AT,
    "buttons_of (a press naming its delivery)": bridge_buttons.BUTTONS_OF,
    "buttons_at (a press naming only its message)": bridge_buttons.BUTTONS_AT,
    "approval": approvals.APPROVAL,
    "approvals of tool calls (two)": approvals.for_tool_uses_sql(2),
    "pending approvals (two sessions)": approvals.pending_sql(2),
    "prune delivery_posts": bridge_store.PRUNE_POSTS,
    "notification (admin)": hot_reads.NOTIFICATION,
    "workspace_deliveries (admin)": bridge_store.WORKSPACE_DELIVERIES,
    "intent (admin)": bridge_store.INTENT,
    "admin_actions (admin)": bridge_store.ADMIN_ACTIONS,
    "notification_routes (admin, two ids)": bridge_store.notification_routes_sql(2),
    "turn page: the cursor's start (admin)": history.RUN_STARTED_AT,
    "turn page: newest runs (admin)": history.RUNS_NEWEST,
    "turn page: older runs (admin)": history.RUNS_OLDER,
    "turn page: newer runs (admin)": history.RUNS_NEWER,
    "turn page: messages of two runs (admin)": history.messages_of_runs_sql(2),
    "turn page: tool calls of two runs (admin)": history.tool_calls_of_runs_sql(2),
    "turn page: the agent's rows of two runs (admin)": history.agent_rows_of_runs_sql(2),
    "audit page: newest events (admin)": history.EVENTS_NEWEST,
    "audit page: older events (admin)": history.EVENTS_OLDER,
    "audit page: newer events (admin)": history.EVENTS_NEWER,
    "/status after a restart: the last turns' context": history.TURNS_FINISHED,
    "budget before a call: a workspace's day": budget_sql(agent_prefix="acme/"),
    "budget before a call: an agent's day": budget_sql(agent_family="acme/ops"),
    "budget before a call: an operator's day": budget_sql(agent_prefix="acme/", payer="al"),
    "schedule_wakeup: the session's pending one": wakeups.PENDING_OF,
    "schedule_wakeup: the session's day so far": wakeups.ASKED_SINCE,
}


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plans") / "switchboard.db"

    async def migrate() -> None:
        store = await Store.open(path, extra_migrations={"bridge": BRIDGE_MIGRATIONS})
        await store.close()

    asyncio.run(migrate())
    return path


def plan(path: Path, sql: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        parameters = (None,) * sql.count("?")
        return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)]


@pytest.mark.parametrize("name", STATEMENTS)
def test_no_hot_statement_scans_a_table(database: Path, name: str) -> None:
    steps = plan(database, STATEMENTS[name])
    scans = [step for step in steps if FULL_SCAN.match(step)]
    assert scans == [], f"{name} reads a whole table: {steps}"
    assert not [s for s in steps if "TEMP B-TREE" in s], f"{name} sorts what it found: {steps}"


def test_the_check_catches_a_full_scan(database: Path) -> None:
    """A check that cannot fail is no check: a read by an unindexed column is caught."""
    steps = plan(database, "SELECT * FROM deliveries WHERE text = ?")
    assert [s for s in steps if FULL_SCAN.match(s)] == ["SCAN deliveries"]
