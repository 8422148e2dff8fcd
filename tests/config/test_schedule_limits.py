"""What a workspace's admin may not give a schedule, on every path that loads it: an `every`
under the server's floor (the server's `[server] schedule_min_every` alone lowers it), a field
of megabytes, or a raw control character (NUL, ESC, a bidi override) that would hide or
reorder what an operator reads. Each refusal names the field and the fix, never the text."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import ConfigError
from config.loading import parse
from tests.config.test_automation_config import DEFAULT, schedule

SOURCE = Path("switchboard.toml")


def refusal(*tables: str, server: str = "") -> str:
    with pytest.raises(ConfigError) as refused:
        parse(server + DEFAULT + "".join(tables), SOURCE, {})
    return str(refused.value)


def test_every_under_the_floor_is_refused_saying_the_floor_and_who_lowers_it() -> None:
    file = DEFAULT + schedule(every="1s", prompt="Check.")
    said = refusal(schedule(every="1s", prompt="Check."))
    # said at its own key, on its line
    [line] = [n for n, text in enumerate(file.splitlines(), 1) if text.strip() == 'every = "1s"']
    assert (
        'workspaces[0].schedules[0].every ("local", "morning"): every = \'1s\' is under this '
        "server's floor"
    ) in said
    assert said.endswith(f"(line {line})") and "(top level)" not in said
    assert "of 60s" in said and "schedule_min_every under [server]" in said
    assert "every = '59s'" in refusal(schedule(every="59s", prompt="Check."))
    assert "every = '500ms'" in refusal(schedule(every="500ms", prompt="Check."))
    config = parse(DEFAULT + schedule(every="60s", prompt="Check."), SOURCE, {})
    assert config.server.schedule_min_every == "60s"
    assert config.workspaces[0].schedules[0].timing.every_s == 60


def test_the_server_alone_lowers_the_floor_and_never_under_a_second() -> None:
    lowered = '[server]\nschedule_min_every = "5s"\n'
    config = parse(lowered + DEFAULT + schedule(every="5s", prompt="Check."), SOURCE, {})
    assert config.workspaces[0].schedules[0].every == "5s"
    assert "under this server's floor of 5s" in refusal(
        schedule(every="2s", prompt="Check."), server=lowered
    )
    too_low = '[server]\nschedule_min_every = "100ms"\n'
    assert "schedule_min_every = '100ms' is under a second" in refusal(server=too_low)
    # A workspace has no key of its own for it: a workspace's admin cannot lower it.
    said = refusal(schedule(every="5s", prompt="Check."), '\nschedule_min_every = "1s"\n')
    assert "schedule_min_every" in said and "unknown key" in said


MEGABYTES = "x" * 3_000_000


@pytest.mark.parametrize(
    "keys,field",
    [
        ({"prompt": "y" * 8_001}, "prompt"),
        ({"prompt": MEGABYTES}, "prompt"),
        ({"agent": "a" * 65}, "agent"),
        ({"deliver": "d" * 65}, "deliver"),
        ({"id": "i" * 65}, "id"),
        ({"timezone": "Europe/" + MEGABYTES}, "timezone"),
        ({"active_hours": "0" * 65}, "active_hours"),
        ({"every": "1" * 65 + "s"}, "every"),
        ({"cron": "*" * 201}, "cron"),
    ],
)
def test_a_field_too_long_is_refused_by_name_without_quoting_it(
    keys: dict[str, str], field: str
) -> None:
    timing = {} if "every" in keys or "cron" in keys else {"every": "1h"}
    said = refusal(schedule(**{"prompt": "Check.", **timing, **keys}))
    assert f"{field} is " in said and "characters long; at most " in said, said
    assert len(said) < 500, "the value is not quoted back"


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\u202e", "\u2066", "\x7f", "\r"])
@pytest.mark.parametrize("field", ["prompt", "agent", "deliver", "timezone", "cron", "id"])
def test_a_raw_control_character_is_refused_naming_the_field(char: str, field: str) -> None:
    value = {"prompt": "Check", "agent": "assistant", "deliver": "primary"}.get(field, "")
    keys = {"every": "1h", "prompt": "Check."} if field != "cron" else {"prompt": "Check."}
    keys[field] = {"timezone": "UTC", "cron": "0 9 * * *", "id": "morning"}.get(field, value)
    keys[field] = keys[field][:2] + char + keys[field][2:]
    said = refusal(schedule(**keys))
    assert f"{field} holds a control character (U+{ord(char):04X}, at character 3)" in said, said


def test_line_breaks_and_tabs_pass_in_a_prompt() -> None:
    prompt = "Check the queue:\n\t- stuck builds\r\n\t- failed deploys"
    config = parse(DEFAULT + schedule(every="1h", prompt=prompt), SOURCE, {})
    assert config.workspaces[0].schedules[0].prompt == prompt
    assert "agent holds a control character" in refusal(
        schedule(every="1h", prompt="Check.", agent="assis\ntant")
    )
