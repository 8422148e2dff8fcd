"""The console's edits of a workspace's schedules written into the admin's file: the keys the
admin changed are written, a schedule removed is taken out, a new one appended as its siblings
are laid out; every other byte stays. What the loader refuses it refuses in its own words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from config.edit import ScheduleEdit, WorkspaceEdit, edit_workspace
from config.errors import ConfigError
from config.loading import parse
from config.schema import WorkspaceConfig

MORNING = """\
  # Ask Dana before moving this one.
  [[workspaces.schedules]]
  id = "morning"              # the daily check
  agent = "helper"
  cron = "0 9 * * 1-5"
  timezone = "Europe/Berlin"  # Dana's
  prompt = "Check the deploy queue."
  active_hours = "08:00-20:00"
"""
TICK = """\
  [[workspaces.schedules]]
  id = "tick"
  agent = "helper"
  every = "1h"
  prompt = "Tick."   # short on purpose
  deliver = "silent"
"""
GLOBEX = """\
[[workspaces]]
id = "globex"
default_agent = "helper"
console = { operator = "gus" }
operators = [{ id = "gus", primary = true }]
agents = [{ id = "helper" }]
"""
SOURCE = f"""\
# Switchboard for ACME.

[[workspaces]]
id = "acme"
default_agent = "helper"
console = {{ operator = "alice" }}

  [[workspaces.operators]]
  id = "alice"
  primary = true

  [[workspaces.operators]]
  id = "bob"

  [[workspaces.agents]]
  id = "helper"

  [[workspaces.agents]]
  id = "reviewer"

{MORNING}
{TICK}
{GLOBEX}"""
PATH = Path("acme.toml")


def workspaces(text: str = SOURCE) -> list[WorkspaceConfig]:
    return parse(text, PATH, {}).workspaces


def as_running(workspace: WorkspaceConfig) -> tuple[ScheduleEdit, ...]:
    return tuple(ScheduleEdit.of(s) for s in workspace.schedules)


def test_saving_the_schedules_unchanged_leaves_every_byte() -> None:
    acme, globex = workspaces()
    assert edit_workspace(SOURCE, acme, WorkspaceEdit(schedules=as_running(acme))) == SOURCE
    assert edit_workspace(SOURCE, globex, WorkspaceEdit(schedules=())) == SOURCE


def test_a_schedule_edited_changes_only_its_changed_keys() -> None:
    acme, _ = workspaces()
    morning, tick = as_running(acme)
    typed = "Look at ${ACME_BOT}'s queue.\nSay only what is stuck."
    tick = replace(tick, every="2m", prompt=typed, agent="reviewer", max_rounds=5)
    morning = replace(morning, cron=None, every="15m", active_hours=None)
    edited = edit_workspace(SOURCE, acme, WorkspaceEdit(schedules=(morning, tick)))
    new_morning, new_tick = workspaces(edited)[0].schedules
    assert (new_tick.every, new_tick.agent, new_tick.max_rounds) == ("2m", "reviewer", 5)
    assert new_tick.prompt == typed, "what is typed loads as typed, never from the environment"
    assert new_tick.deliver == "silent"
    assert (new_morning.cron, new_morning.every, new_morning.active_hours) == (None, "15m", None)
    assert "cron" not in edited and "active_hours" not in edited, "a cleared key is taken out"
    for line in (
        "# Switchboard for ACME.",
        "  # Ask Dana before moving this one.",
        '  id = "morning"              # the daily check',
        '  timezone = "Europe/Berlin"  # Dana\'s',
        '  deliver = "silent"',
    ):
        assert line + "\n" in edited, line
    assert edited.startswith(SOURCE[: SOURCE.index(MORNING)]), "what comes before, byte for byte"
    assert edited.endswith(GLOBEX), "the other workspace byte for byte"


def test_a_schedule_added_and_one_removed() -> None:
    acme, _ = workspaces()
    morning, _tick = as_running(acme)
    nightly = ScheduleEdit(
        "nightly",
        "reviewer",
        at="2026-12-01T09:00:00+01:00",
        prompt="Rotate the logs.",
        session="fresh",
        enabled=False,
    )
    edited = edit_workspace(SOURCE, acme, WorkspaceEdit(schedules=(morning, nightly)))
    assert TICK not in edited and '"tick"' not in edited
    assert MORNING in edited
    assert (
        '  [[workspaces.schedules]]\n  id = "nightly"\n  agent = "reviewer"\n'
        '  at = "2026-12-01T09:00:00+01:00"\n  prompt = "Rotate the logs."\n'
        '  session = "fresh"\n  enabled = false\n\n[[workspaces]]\nid = "globex"'
    ) in edited, "indented as its siblings, only the keys that are not their default"
    [_, loaded] = workspaces(edited)[0].schedules
    assert (loaded.id, loaded.session, loaded.enabled) == ("nightly", "fresh", False)
    assert loaded.at is not None and loaded.at.isoformat() == "2026-12-01T09:00:00+01:00"

    emptied = edit_workspace(SOURCE, acme, WorkspaceEdit(schedules=()))
    assert "[[workspaces.schedules]]" not in emptied and "schedules = []" not in emptied
    assert workspaces(emptied)[0].schedules == []


def test_the_first_schedule_of_a_workspace_and_an_inline_list() -> None:
    _, globex = workspaces()
    first = ScheduleEdit("hourly", "helper", every="1h", prompt="Look around.")
    edited = edit_workspace(SOURCE, globex, WorkspaceEdit(schedules=(first,)))
    assert edited.startswith(SOURCE), "appended after everything that was there"
    assert edited.endswith(
        '\n\n[[workspaces.schedules]]\nid = "hourly"\nagent = "helper"\nevery = "1h"\n'
        'prompt = "Look around."\n\n'
    )
    assert [s.id for s in workspaces(edited)[1].schedules] == ["hourly"]

    inline = SOURCE.replace(
        'agents = [{ id = "helper" }]\n',
        'agents = [{ id = "helper" }]\n'
        'schedules = [{ id = "a", agent = "helper", every = "1h", prompt = "A." }]\n',
    )
    globex = workspaces(inline)[1]
    [a] = as_running(globex)
    second = ScheduleEdit("b", "helper", cron="0 9 * * *", prompt="B.")
    edited = edit_workspace(
        inline, globex, WorkspaceEdit(schedules=(replace(a, every="2h"), second))
    )
    assert 'schedules = [{ id = "a", agent = "helper", every = "2h", prompt = "A." }, ' in edited
    assert [(s.id, s.every, s.cron) for s in workspaces(edited)[1].schedules] == [
        ("a", "2h", None),
        ("b", None, "0 9 * * *"),
    ]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"cron": "0 3 * * *"},
            "schedule 'morning' never fires: no time of cron '0 3 * * *' falls inside its "
            "active_hours '08:00-20:00' in Europe/Berlin",
        ),
        (
            {"timezone": "Mars/Olympus"},
            "unknown timezone 'Mars/Olympus'; use an IANA name such as UTC or Europe/Berlin",
        ),
        (
            {"every": "15m"},
            "schedule 'morning' needs exactly one of cron, every or at (it has cron and every)",
        ),
        ({"at": "next tuesday"}, "at = 'next tuesday' is not a date and time; write ISO 8601"),
        ({"agent": "ghost"}, "agent = 'ghost' is not an agent of this workspace"),
        ({"id": "tick"}, "schedule id 'tick' is defined twice"),
    ],
)
def test_what_the_loader_refuses_it_refuses_in_its_words(
    change: dict[str, str], words: str
) -> None:
    acme, _ = workspaces()
    morning, tick = as_running(acme)
    edited = edit_workspace(
        SOURCE, acme, WorkspaceEdit(schedules=(replace(morning, **change), tick))
    )
    with pytest.raises(ConfigError) as refused:
        workspaces(edited)
    assert words in str(refused.value)
