"""`switchboard status` and `switchboard usage` as the admin types them name each session by
what a person knows, never by its id (issue 43): the terminal chat's two sessions (one before
`/new`, one after) told apart by when, and a child agent by its parent's name and its task.
The model has no price, as the offline one: `usage` ranks the sessions by the tokens each
used, largest first, and prints only the days with use (the rest of the month one line)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from config import load
from config.schema import BUILTIN_TOOLS
from runtime.events import EventType
from runtime.records import SessionRecord
from tests.adapters.cli_process import run_to_end
from tests.adapters.console_harness import YOU, ConsoleHarness
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import wait_for

TASK = "count the lines of every log file under /var/log and say which file grew the most today"


NAME_CHARS = 56  # of a session's name in usage's table


def ended(earlier: SessionRecord, later: SessionRecord) -> str:
    """When the earlier session ended, as its name says: the time alone on the same day."""
    start, end = (datetime.fromtimestamp(r.created_at, UTC) for r in (earlier, later))
    return f"{end:%H:%M}" if start.date() == end.date() else moment(later.created_at)


def moment(wall: float) -> str:
    """ "7 Dec 03:08": a time as a session's name says it (the workspace's zone is UTC)."""
    at = datetime.fromtimestamp(wall, UTC)
    return f"{at.day} {at:%b %H:%M}"


def shorten(label: str) -> str:
    """A ranked session's "name · agent", its name cut so that the whole fits NAME_CHARS."""
    name, dot, agent = label.rpartition(" \u00b7 ")
    most = NAME_CHARS - len(agent) - 3
    name = name if len(name) <= most else name[: most - 1].rstrip() + "\u2026"
    return f"{name}{dot}{agent}"


def unpriced_config(db: Path, fake: FakeAnthropic) -> Path:
    """The terminal chat in workspace `local` (UTC), its agent able to spawn and sleep, on a
    model without a price."""
    local = workspace("local", [YOU], console="you", queue_mode="steer", agent_tools=BUILTIN_TOOLS)
    provider = {**anthropic(fake.url), "prices": {}}
    return write_config(
        db.parent / "switchboard.toml", db=db, provider=provider, workspaces=[local]
    )


def answer(body: dict[str, Any]) -> Reply:
    """The parent spawns a child with TASK and says so; the child sleeps, held there."""
    said = str(body["messages"])
    if TASK in said and "spawn_agent" not in said:  # the child's own conversation
        return tools(("sleep", {"seconds": 60}))
    if "started child agent" in said:
        return text("A child agent is on it.")
    return tools(("spawn_agent", {"task": TASK}))


def spend_rows(out: str, title: str) -> list[str]:
    """The names of a section's rows, in the order printed."""
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip() == title) + 1
    names = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        names.append(re.split(r"\s{2,}", line.strip())[0])
    return names


async def test_status_and_usage_name_every_session(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    file = unpriced_config(db_path, anthropic_api)
    console = await ConsoleHarness(load(file)).start()
    try:
        anthropic_api.script = [text("first answer")]
        console.type("hello")
        await console.expect("agent> first answer")
        console.type("/new")
        await console.expect("Started a fresh session")
        anthropic_api.responder = answer
        console.type("look after the logs")
        await wait_for(
            console.app.runtime, EventType.TOOL_STARTED, lambda e: e.data.name == "sleep"
        )
        records = sorted(
            (s.record for s in console.app.runtime.sessions.values()), key=lambda r: r.created_at
        )
        earlier, current, child = records
        assert child.parent_session_id == current.id

        code, out = await run_to_end("status", "--config", file)

        assert code == 0, out
        assert "ses_" not in out, out
        since = moment(current.created_at)  # the workspace's timezone is UTC
        assert "Workspace local: 2 of 3 session(s) active." in out, out
        parent = f"  - console (you), since {since} \u00b7 assistant \u00b7 waiting for its child"
        assert parent in out, out
        task = "count the lines of every log file under /var/log and say wh\u2026"
        kid = f"  - child of console (you): {task} \u00b7 assistant/child-1 \u00b7 running tool"
        assert kid in out, out

        code, out = await run_to_end("usage", "--config", file)

        assert code == 0, out
        assert "ses_" not in out, out
        assert "$0.00" in out and "$0.0" not in out.replace("$0.00", ""), "no price: $0.00"
        named = {
            earlier.id: (
                f"console (you), {moment(earlier.created_at)} to {ended(earlier, current)}, "
                "ended by /new \u00b7 assistant"
            ),
            current.id: f"console (you), since {since} \u00b7 assistant",
            child.id: f"child of console (you): {task} \u00b7 assistant/child-1",
        }
        used: dict[str, int] = {}
        for row in await console.app.runtime.store.read_sql(
            "SELECT session_id, input_tokens + cache_read_tokens + cache_write_tokens"
            " + output_tokens AS tokens FROM model_usage"
        ):
            used[row["session_id"]] = used.get(row["session_id"], 0) + int(row["tokens"])
        ranked = sorted(used, key=lambda s: -used[s])
        assert len(set(used.values())) == 3, "three sessions, each its own number of tokens"
        assert spend_rows(out, "Sessions that used the most, this month") == [
            shorten(named[s]) for s in ranked
        ]
        days = out[out.index("Per day, the last 30 days") :].splitlines()
        today = days[2].split()[0]
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", today), days
        assert days[1].strip().endswith(": no model calls (29 days)"), days
        assert days[1].strip().startswith(f"{days[1].split()[0]} to "), days
        assert days[3].startswith("    all 30 days"), days
        today_cells = days[2].split()[1:]
        assert days[3].split()[3:] == today_cells, "the days' sum is today's: no other day used"
        assert out.count("no model calls") == 1, out

        code, out = await run_to_end("usage", "--config", file, "--json")

        assert code == 0, out
        [local] = json.loads(out)["workspaces"]
        assert [(s["id"], s["name"]) for s in local["sessions"]] == [(s, named[s]) for s in ranked]
    finally:
        await console.close()
