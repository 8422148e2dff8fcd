"""`[[workspaces.schedules]]` and `[[workspaces.triggers]]` as a file is loaded: what a right
one gives, and each mistake named by its key path and schedule, with how to fix it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from config import ConfigError
from config.automation import HEARTBEAT_OK
from config.loading import parse

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()
SOURCE = Path("switchboard.toml")
SECRET = "a-webhook-secret-of-32-characters"


def schedule(**keys: str | bool) -> str:
    """One `[[workspaces.schedules]]` table of the default workspace (agent "assistant")."""
    keys = {"id": "morning", "agent": "assistant", **keys}
    return "\n[[workspaces.schedules]]\n" + "".join(
        f"  {key} = {json.dumps(value)}\n" for key, value in keys.items()
    )


def load(*tables: str, environ: dict[str, str] | None = None) -> object:
    return parse(DEFAULT + "".join(tables), SOURCE, environ or {})


def test_schedules_and_a_trigger_load_with_their_timing() -> None:
    config = parse(
        DEFAULT
        + schedule(cron="0 9 * * 1-5", timezone="Europe/Berlin", prompt="Check the queue.")
        + schedule(id="pulse", kind="heartbeat", every="30m", active_hours="22:00-06:00")
        + schedule(id="once", at="2026-12-01T09:00:00", timezone="Europe/Berlin", prompt="Go.")
        + '\n[[workspaces.triggers]]\n  id = "ci"\n  agent = "assistant"\n  kind = "github"\n'
        '  secret = "${CI_SECRET}"\n  prompt = "A CI event arrived."\n',
        SOURCE,
        {"CI_SECRET": SECRET},
    )
    morning, pulse, once = config.workspaces[0].schedules
    monday = morning.timing.next_after(datetime(2026, 11, 27, 12, tzinfo=UTC))  # a Friday
    assert monday is not None and monday.isoformat() == "2026-11-30T09:00:00+01:00"
    assert pulse.text.startswith("Heartbeat:") and HEARTBEAT_OK in pulse.text
    assert 0 <= pulse.timing.jitter_s < 10
    # An `at` without an offset is in the schedule's timezone: 09:00 in Berlin is 08:00 UTC.
    assert once.timing.next_after(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(
        2026, 12, 1, 8, tzinfo=UTC
    )
    trigger = config.workspaces[0].triggers[0]
    assert trigger.secret.get_secret_value() == SECRET and SECRET not in repr(config)


HOW = 'cron = "0 9 * * 1-5", every = "15m" or at = "2026-12-01T09:00:00+01:00"'


@pytest.mark.parametrize(
    "tables,expected",
    [
        (
            [schedule(cron="0 9 * * *", active_hours="10:00-11:00", prompt="x")],
            'workspaces[0].schedules[0] ("local", "morning"): schedule \'morning\' never fires: '
            "no time of cron '0 9 * * *' falls inside its active_hours '10:00-11:00' in UTC; "
            "widen active_hours or change the cron",
        ),
        (
            [
                schedule(
                    every="1d", active_hours="08:00-09:00", timezone="Europe/Berlin", prompt="x"
                )
            ],
            "schedule 'morning' never fires: no time of every '1d' (counted from 1970 UTC) falls "
            "inside its active_hours '08:00-09:00' in Europe/Berlin; widen active_hours or "
            "change the every",
        ),
        (
            [schedule(agent="nobody", every="1h", prompt="x")],
            'workspaces[0].schedules[0].agent ("local", "morning"): schedule \'morning\': '
            "agent = 'nobody' is not an agent of this workspace; use one of ['assistant']",
        ),
        (
            [schedule(every="1h", prompt="x", deliver="carol")],
            'workspaces[0].schedules[0].deliver ("local", "morning"): schedule \'morning\': '
            "deliver = 'carol' must be \"primary\", \"silent\" or an operator id: ['you']",
        ),
        (
            [schedule(every="1h", prompt="x"), schedule(every="2h", prompt="y")],
            "workspaces[0] (\"local\"): schedule id 'morning' is defined twice; give each "
            "schedule an id of its own",
        ),
        (
            [schedule(prompt="x")],
            'workspaces[0].schedules[0] ("local", "morning"): schedule \'morning\' needs '
            f"exactly one of cron, every or at (it has none): {HOW}",
        ),
        (
            [schedule(cron="0 9 * * *", every="1h", prompt="x")],
            "schedule 'morning' needs exactly one of cron, every or at (it has cron and every): "
            + HOW,
        ),
        (
            [schedule(every="30m")],
            "schedule 'morning' needs a prompt: what the agent should do at each run "
            '(or kind = "heartbeat", which asks the agent to check in)',
        ),
        (
            [schedule(every="15 minutes", prompt="x")],
            'workspaces[0].schedules[0].every ("local", "morning"): \'15 minutes\' is not a '
            "duration; write a number and a unit: 90s, 15m, 2h, 1d",
        ),
        (
            [schedule(every="99999999999d", prompt="x")],
            "every = '99999999999d' is over a year; for rarer runs use cron",
        ),
        (
            [schedule(at="tomorrow", prompt="x")],
            'workspaces[0].schedules[0].at ("local", "morning"): at = \'tomorrow\' is not a date '
            "and time; write ISO 8601, e.g. 2026-12-01T09:00:00+01:00",
        ),
        (
            [schedule(cron="0 9 * * *", timezone="Berlin", prompt="x")],
            "unknown timezone 'Berlin'; use an IANA name such as UTC or Europe/Berlin",
        ),
        (
            [schedule(cron="0 25 * * *", prompt="x")],
            "cron '0 25 * * *' is not valid (Bad hour); five fields: minute hour",
        ),
        (
            [schedule(every="1h", active_hours="8-20", prompt="x")],
            "active_hours '8-20' must read HH:MM-HH:MM, e.g. 08:00-20:00",
        ),
        (
            [
                '\n[[workspaces.triggers]]\n  id = "ci"\n  agent = "assistant"\n'
                '  secret = "hunter2"\n  prompt = "x"\n'
            ],
            'workspaces[0].triggers[0].secret ("local", "ci"): a trigger\'s secret must be at '
            "least 16 characters; make one with python3 -c",
        ),
    ],
    ids=[
        "never-fires",
        "every-never-fires",
        "unknown-agent",
        "unknown-deliver",
        "same-id",
        "no-timing",
        "two-timings",
        "no-prompt",
        "bad-every",
        "every-over-a-year",
        "bad-at",
        "bad-timezone",
        "bad-cron",
        "bad-hours",
        "short-secret",
    ],
)
def test_each_mistake_names_the_schedule_and_the_fix(tables: list[str], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(*tables)
    assert expected in str(caught.value), str(caught.value)
    assert str(caught.value).startswith(f"{SOURCE}: 1 problem(s):\n  - workspaces[0]")


def test_a_heartbeat_needs_no_prompt_and_a_past_at_is_not_an_error() -> None:
    config = parse(
        DEFAULT
        + schedule(kind="heartbeat", cron="*/30 8-18 * * 1-5")
        + schedule(id="long-gone", at="2020-01-01T09:00:00+01:00", prompt="x", enabled=False),
        SOURCE,
        {},
    )
    heartbeat, gone = config.workspaces[0].schedules
    assert heartbeat.prompt is None and heartbeat.text.startswith("Heartbeat:")
    assert gone.timing.next_after(datetime.now(UTC)) is None and not gone.enabled


def test_only_an_hmac_trigger_may_require_a_signed_timestamp() -> None:
    table = (
        '\n[[workspaces.triggers]]\n  id = "ci"\n  agent = "assistant"\n  kind = "{kind}"\n'
        f'  secret = "{SECRET}"\n  prompt = "x"\n  require_timestamp = true\n'
    )
    config = load(table.format(kind="hmac"))
    assert config.workspaces[0].triggers[0].require_timestamp  # type: ignore[attr-defined]
    with pytest.raises(ConfigError) as caught:
        load(table.format(kind="github"))
    assert 'require_timestamp is for kind = "hmac" senders; GitHub signs no timestamp' in str(
        caught.value
    )
