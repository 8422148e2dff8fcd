"""`switchboard usage` as the admin types it: after real turns on the fake Anthropic API (while
Switchboard runs and after it stopped), its table and its `--json` equal the sums of the rows
the store holds, to the token; with an empty database and with none at all it says so."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bridge.spend.words import money
from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
from config import load
from runtime.store.store import Store
from tests.adapters.cli_process import run_to_end, switchboard
from tests.adapters.console_harness import YOU, ConsoleHarness
from tests.adapters.test_cli import a_config
from tests.backends import folder_of, postgres_in
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, text, tools

TZ = ZoneInfo("Asia/Tokyo")  # its day begins 9 hours before UTC's: the dates are the workspace's
FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
BUDGETS = [
    {"scope": "workspace", "period": "day", "limit_usd": 5.0},
    {"scope": "operator", "id": "you", "period": "month", "limit_tokens": 1_000_000},
]


def usage_config(db: Path | str, fake: FakeAnthropic) -> Path:
    """A console chat in workspace `local` (Tokyo time, two budgets), its model priced."""
    local = {
        **workspace("local", [YOU], console="you", queue_mode="steer"),
        "timezone": TZ.key,
        "budgets": BUDGETS,
    }
    priced = {"claude-test-model": {"input": 3.0, "output": 15.0}}
    return write_config(
        folder_of(db) / "switchboard.toml",
        db=db,
        provider={**anthropic(fake.url), "prices": priced},
        workspaces=[local],
    )


async def recorded(db: Path | str) -> list[dict[str, Any]]:
    """Every model call the store holds, as its rows say."""
    store = await Store.open(db, exclusive=False)
    try:
        return [dict(r) for r in await store.db.rows("SELECT * FROM model_usage")]
    finally:
        await store.close()


def summed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    sums: dict[str, Any] = {f: sum(int(r[f]) for r in rows) for f in FIELDS}
    return {**sums, "cost_usd": sum(float(r["cost_usd"]) for r in rows), "calls": len(rows)}


def local_day(row: dict[str, Any]) -> date:
    return datetime.fromtimestamp(float(row["at"]), TZ).date()


def assert_spend(shown: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    expected = summed(rows)
    assert {f: shown[f] for f in (*FIELDS, "calls")} == {f: expected[f] for f in (*FIELDS, "calls")}
    assert all(isinstance(shown[f], int) for f in (*FIELDS, "calls")), shown
    assert shown["cost_usd"] == pytest.approx(expected["cost_usd"], abs=1e-9)


def assert_json_is_the_store(doc: dict[str, Any], rows: list[dict[str, Any]], days: int) -> None:
    [local] = doc["workspaces"]
    assert (local["id"], local["timezone"]) == ("local", TZ.key)
    today = date.fromisoformat(local["days"][-1]["date"])
    assert len(local["days"]) == days
    for day in local["days"]:
        assert_spend(day, [r for r in rows if local_day(r) == date.fromisoformat(day["date"])])
    month = [r for r in rows if local_day(r).replace(day=1) == today.replace(day=1)]
    assert_spend(local["today"], [r for r in rows if local_day(r) == today])
    assert_spend(local["month"], month)
    apart = local["month_of_which"]
    assert set(apart) == {"memory", "compaction"}, "each key always present"
    assert_spend(apart["memory"], [r for r in month if r["purpose"] == "memory_flush"])
    assert_spend(apart["compaction"], [r for r in month if r["purpose"] == "compaction"])
    [agent] = local["agents"]
    assert agent["id"] == "assistant"
    assert_spend(agent, month)
    [operator] = local["operators"]
    assert operator["id"] == "you"
    assert_spend(operator, month)
    assert local["schedules"] == []
    for session in local["sessions"]:
        assert_spend(session, [r for r in month if r["session_id"] == session["id"]])
    assert {s["id"] for s in local["sessions"]} == {r["session_id"] for r in month}
    workspace_day, you_month = local["budgets"]
    assert (workspace_day["unit"], workspace_day["limit"]) == ("usd", 5.0)
    spent = summed([r for r in rows if local_day(r) == today])["cost_usd"]
    assert workspace_day["used"] == pytest.approx(spent, abs=1e-9)
    tomorrow = today + timedelta(days=1)
    assert workspace_day["renews_at"] == f"{tomorrow.isoformat()}T00:00:00+09:00"
    tokens = summed(month)
    assert (you_month["unit"], you_month["limit"]) == ("tokens", 1_000_000)
    assert you_month["used"] == sum(tokens[f] for f in FIELDS)


def cells(out: str, label: str) -> list[str]:
    """The cost and token cells of the table's row `label`."""
    [line] = [ln for ln in out.splitlines() if ln.strip().startswith(f"{label}  ")]
    return line.split()[-5:]


def expected_cells(rows: list[dict[str, Any]]) -> list[str]:
    s = summed(rows)
    cached = s["cache_read_tokens"] + s["cache_write_tokens"]
    tokens_in = s["input_tokens"] + cached
    return [
        money(s["cost_usd"]),
        f"{tokens_in:,}",
        f"{cached:,}",
        f"{s['output_tokens']:,}",
        f"{s['calls']:,}",
    ]


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
async def test_usage_equals_what_the_store_recorded(
    anthropic_api: FakeAnthropic, tmp_path: Path, engine: str
) -> None:
    """Two turns (one call, then a tool round and its answer), `usage --json` while
    Switchboard runs, then the table once it stopped."""
    db: Path | str = tmp_path / "switchboard.db" if engine == "sqlite" else postgres_in(tmp_path)
    file = usage_config(db, anthropic_api)
    console = await ConsoleHarness(load(file)).start()
    try:
        anthropic_api.script = [text("first answer")]
        console.type("hello")
        await console.expect("agent> first answer")
        anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("second answer")]
        console.type("nap, then answer")
        await console.expect("agent> second answer")
        await console.app.bridge.settle()

        code, out = await run_to_end("usage", "--config", file, "--json")

        assert code == 0, out
        rows = await recorded(db)
        assert len(rows) == 3 and summed(rows)["cost_usd"] > 0, rows
        assert sum(int(r["cache_read_tokens"]) for r in rows) > 0, "the fake caches the prompt"
        assert_json_is_the_store(json.loads(out), rows, days=30)
    finally:
        await console.close()

    code, out = await run_to_end("usage", "--config", file, "--workspace", "local", "--days", "3")

    assert code == 0, out
    title = out.splitlines()[0]  # Workspace local: spend as of 2026-11-27 21:03 Asia/Tokyo
    assert title.startswith("Workspace local: spend as of ") and title.endswith(" Asia/Tokyo")
    today = date.fromisoformat(title.split()[5])
    on_day = [r for r in rows if local_day(r) == today]
    month = [r for r in rows if local_day(r).replace(day=1) == today.replace(day=1)]
    header = out.splitlines()[1].split()
    assert header == ["cost", "tokens", "in", "cached", "tokens", "out", "calls"], out
    assert cells(out, "Today") == expected_cells(on_day)
    assert cells(out, today.isoformat()) == expected_cells(on_day)
    for label in ("This month", "assistant", "you"):
        assert cells(out, label) == expected_cells(month), label
    assert "By schedule and trigger, this month: none" in out
    assert "Per day, the last 3 days" in out
    used = money(summed(on_day)["cost_usd"])
    assert f"    The workspace's daily budget: {used} of $5.00 (0%). The budget renews at " in out
    tokens = sum(summed(month)[f] for f in FIELDS)
    assert f"    Operator you's monthly budget: {tokens:,} tokens of 1,000,000 tokens (" in out


async def test_usage_with_no_database_then_an_empty_one(tmp_path: Path) -> None:
    """What `--help` promises, the words when nothing was recorded, a workspace not there."""
    helped = " ".join(switchboard("usage", "--help").stdout.split())
    assert helped.startswith("usage: switchboard usage [-h] [--config PATH] [--workspace ID]")
    assert "Days and months are the workspace's (its `timezone`)" in helped
    assert "--json print one JSON document instead, for scripts" in helped
    config = a_config(tmp_path)
    db = tmp_path / "sb.db"

    result = switchboard("usage", "--config", config)

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"No model calls yet: there is no database at {db}, so Switchboard has not run here. "
        f"Start it with `switchboard run --config {config}`; what its agents spend shows here.\n"
    )
    result = switchboard("usage", "--config", config, "--json", "--days", "2")
    assert result.returncode == 0 and "no database at" in result.stderr
    [local] = json.loads(result.stdout)["workspaces"]
    assert [d["calls"] for d in local["days"]] == [0, 0] and local["month"]["cost_usd"] == 0
    assert not db.exists(), "usage only reads"

    store = await Store.open(db, extra_migrations={"bridge": BRIDGE_MIGRATIONS})
    await store.close()
    result = switchboard("usage", "--config", config)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Workspace local: spend as of ") and lines[0].endswith(" UTC")
    assert lines[1:] == [
        "  No model calls yet: what they cost shows here once an agent answers.",
        "  No budgets are set ([[workspaces.budgets]] in the config).",
    ]

    wrong = switchboard("usage", "--config", config, "--workspace", "nope")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr == (
        f"switchboard: {config}: no workspace 'nope' (there are: local); pass one of them to"
        " --workspace\n"
    )
