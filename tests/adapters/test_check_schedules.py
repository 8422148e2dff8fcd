"""`switchboard check-config` as an admin types it, on a file with schedules and a trigger:
each schedule's next three times in its own timezone (or why there are none), and the URL each
trigger is posted to."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.adapters.cli_process import ROOT, switchboard

DEFAULT = (ROOT / "config/switchboard.toml").read_text().replace('id = "local"', 'id = "acme"')
SECRET = "ci-webhook-secret-0123456789"
# The pulse runs every 5 s, under the default floor of a schedule's `every`: lowered here.
FLOOR = '[server]\nschedule_min_every = "5s"\n'
AUTOMATION = """
  [[workspaces.schedules]]
  id = "morning-check"
  agent = "assistant"
  cron = "0 9 * * 1-5"
  timezone = "Europe/Berlin"
  prompt = "Check the deploy queue."

  [[workspaces.schedules]]
  id = "pulse"
  agent = "assistant"
  kind = "heartbeat"
  every = "5s"

  [[workspaces.schedules]]
  id = "new-year"
  agent = "assistant"
  at = 2020-01-01T09:00:00
  timezone = "America/New_York"
  prompt = "Happy new year."

  [[workspaces.schedules]]
  id = "cleanup"
  agent = "assistant"
  every = "1h"
  prompt = "Clean up."
  enabled = false

  [[workspaces.triggers]]
  id = "ci"
  agent = "assistant"
  kind = "github"
  secret = "${CI_SECRET}"
  prompt = "A CI event arrived."
"""


def check_config(tmp_path: Path, text: str) -> dict[str, str]:
    """check-config's output: its schedule and trigger lines by id, the rest under ''."""
    path = tmp_path / "switchboard.toml"
    path.write_text(text)
    result = switchboard("check-config", "--config", path, env={"CI_SECRET": SECRET}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert SECRET not in result.stdout
    found = {"": result.stdout}
    for line in result.stdout.splitlines():
        named = re.match(r"  (?:schedule|heartbeat|trigger) (\S+) ", line)
        if named:
            found[named.group(1)] = line
    return found


def times(line: str, zone: str, seconds: bool = False) -> list[datetime]:
    """The fire times a line lists, each written `Mon 2026-11-30 09:00 CET`."""
    listed = line.split("; next ")[1].split(" (+")[0].split(", ")
    shape = "%a %Y-%m-%d %H:%M" + (":%S" if seconds else "")
    return [
        datetime.strptime(t.rsplit(" ", 1)[0], shape).replace(tzinfo=ZoneInfo(zone)) for t in listed
    ]


def test_check_config_says_when_each_schedule_fires_and_where_a_trigger_posts(
    tmp_path: Path,
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    lines = check_config(tmp_path, FLOOR + DEFAULT + AUTOMATION)
    after = datetime.now(UTC)

    morning = lines["morning-check"]
    assert morning.startswith(
        '  schedule morning-check (agent assistant, to primary): cron "0 9 * * 1-5" in '
        "Europe/Berlin; next "
    )
    weekdays = times(morning, "Europe/Berlin")
    assert len(weekdays) == 3 and weekdays[0] > before
    assert all(t.weekday() < 5 and (t.hour, t.minute) == (9, 0) for t in weekdays), morning
    for earlier, later in pairwise(weekdays):  # each the next weekday
        assert (later.date() - earlier.date()).days == (3 if earlier.weekday() == 4 else 1)
    assert all(t.strftime("%Z") in morning for t in weekdays)  # CET or CEST, as it falls

    pulse = lines["pulse"]
    assert pulse.startswith("  heartbeat pulse (agent assistant, to primary): every 5s in UTC;")
    seconds = times(pulse, "UTC", seconds=True)
    assert before < seconds[0] <= after + timedelta(seconds=5)
    assert [t - seconds[0] for t in seconds] == [timedelta(seconds=s) for s in (0, 5, 10)]
    assert all(t.second % 5 == 0 for t in seconds)

    assert lines["new-year"].endswith(
        "once in America/New_York; at Wed 2020-01-01 09:00 EST has passed: remove it or set "
        "a later at"
    )
    assert lines["cleanup"].endswith("every 1h in UTC; paused in the config (enabled = false)")
    assert lines["ci"] == (
        "  trigger ci (agent assistant, to primary): POST /hooks/acme/ci, github signature"
    )

    public = FLOOR + 'public_url = "https://bot.example.com/"\n\n' + DEFAULT + AUTOMATION
    assert check_config(tmp_path, public)["ci"] == (
        "  trigger ci (agent assistant, to primary): POST https://bot.example.com/hooks/acme/ci,"
        " github signature"
    )
