"""What an operator reads in the log of `switchboard run` (the console chat on a pipe, the
offline model): one line when a turn starts and one when it ends, who stopped a turn, one line
for the store's migrations, a crash's traceback on lines of its own; and, started again with
`--log-format json`, one JSON object per line for a collector. No message text and no secret
in either."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

from tests.adapters.cli_process import read_until, start
from tests.config_file import workspace, write_config

FAULTS = Path(__file__).parent / "faults"  # its sitecustomize breaks the sleep tool on demand
SECRET = "model-key-for-the-operator-log-test"
FIELD = re.compile(r" ([a-z_]+)=('(?:[^'\\]|\\.)*'|\S+)")


def records(text: str) -> list[str]:
    """Log records: a line that starts with its time, and the indented lines under it."""
    found: list[str] = []
    for line in text.splitlines():
        if line.startswith("    ") and found:
            found[-1] += "\n" + line
        else:
            found.append(line)
    return found


def fields(record: str) -> dict[str, str]:
    first = record.split("\n", 1)[0]
    return {k: v.strip("'") for k, v in FIELD.findall(first)}


async def chat(proc: Any, line: str, until: str) -> str:
    assert proc.stdin is not None
    proc.stdin.write(line.encode() + b"\n")
    await proc.stdin.drain()
    return await read_until(proc, until)


async def leave(proc: Any) -> None:
    """Ctrl-D: the input ends, the process finishes its work and exits."""
    proc.stdin.close()
    assert proc.stdout is not None
    rest = (await asyncio.wait_for(proc.stdout.read(), 30)).decode()
    assert await asyncio.wait_for(proc.wait(), 30) == 0, rest


async def test_an_operator_follows_turns_stops_and_crashes_in_the_log(tmp_path: Path) -> None:
    local = workspace("local", [{"id": "you", "primary": True}], console="you")
    config = write_config(tmp_path / "switchboard.toml", db=tmp_path / "sb.db", workspaces=[local])
    python_path = os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": python_path, "SB_TEST_CRASHING_SLEEP": "1", "ANTHROPIC_API_KEY": SECRET}
    log_file = tmp_path / "switchboard.log"

    proc = await start("run", "--config", config, env=env)
    await read_until(proc, "Type a message")
    await chat(proc, "say the magic words", "You said: say the magic words")
    await chat(proc, "work 5", "Step 1 of 5")
    await chat(proc, "/stop", "Stopped.")
    await chat(proc, "sleep 0", "Done: 1 step(s)")
    await leave(proc)
    text = log_file.read_text()
    logged = records(text)

    ready = [r for r in logged if "store ready:" in r]
    assert len(ready) == 1, logged
    migrations = r"store ready: \d+ migrations applied \(runtime 1-\d+, bridge 1-\d+\)"
    assert re.search(migrations, ready[0]), ready[0]
    assert "store migrated" not in text, "each migration is logged at debug only"

    started = [fields(r) for r in logged if " turn started " in r]
    ended = [fields(r) for r in logged if " turn ended " in r]
    assert len(started) == len(ended) == 3, "one line at each start and end of the three turns"
    assert [e["run_id"] for e in ended] == [s["run_id"] for s in started]
    for line in started + ended:
        assert line["workspace"] == "local" and line["agent"] == "assistant", line
        assert line["session_id"].startswith("ses_"), line
    answered, stopped, crashed = ended
    assert answered["outcome"] == "answered" and answered["rounds"] == "1"
    assert int(answered["input_tokens"]) > 0 and int(answered["output_tokens"]) > 0
    assert float(answered["duration_s"]) >= 0
    assert stopped["outcome"] == "stopped" and stopped["reason"] == "stopped by the operator"
    assert crashed["outcome"] == "answered" and crashed["rounds"] == "2", "the model went on"

    (stop,) = [fields(r) for r in logged if " turn stopped " in r]
    assert stop == {"session_id": stopped["session_id"], "run_id": stopped["run_id"], "by": "you"}

    (crash,) = [r for r in logged if " tool crashed " in r]
    lines = crash.split("\n")
    assert lines[1] == "    Traceback (most recent call last):", "the traceback is below its line"
    assert lines[-1] == (
        "    RuntimeError: forced for the test: the sleep tool broke, holding [redacted]"
    )
    assert SECRET not in text
    assert "magic words" not in text, "no message text in the log"

    # Started again, for a log collector: JSON lines, with the same fields.
    proc = await start("run", "--config", config, "--log-format", "json", env=env)
    await read_until(proc, "Type a message")
    await chat(proc, "say it again", "You said: say it again")
    await chat(proc, "sleep 0", "Done: 1 step(s)")
    await leave(proc)
    new = log_file.read_text()[len(text) :]
    entries = [json.loads(line) for line in new.splitlines()]
    assert [e["message"] for e in entries if e["message"].startswith("store ")] == [
        "store up to date"
    ]
    ends = [e for e in entries if e["message"] == "turn ended"]
    assert [e["outcome"] for e in ends] == ["answered", "answered"]
    assert ends[0]["rounds"] == 1 and ends[0]["input_tokens"] > 0
    assert ends[0]["workspace"] == "local" and ends[0]["agent"] == "assistant"
    assert {"time", "level", "logger", "session_id", "run_id", "duration_s"} <= set(ends[0])
    (crash_entry,) = [e for e in entries if e["message"] == "tool crashed"]
    assert crash_entry["level"] == "ERROR" and crash_entry["tool"] == "sleep"
    assert crash_entry["traceback"].startswith("Traceback (most recent call last):\n")
    assert crash_entry["traceback"].endswith("the sleep tool broke, holding [redacted]")
    assert SECRET not in new and "say it again" not in new
