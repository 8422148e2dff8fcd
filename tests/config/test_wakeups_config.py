"""`[workspaces.wakeups]`: the floor and the day's cap of an agent's wake-ups, from the file to
the runtime's typed limits; a nonsense value named by its key path, in check-config too."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.server.assembly import runtime_roster
from config import ConfigError
from config.loading import parse
from runtime.agents import WakeupLimits
from tests.adapters.cli_process import switchboard

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()
SOURCE = Path("switchboard.toml")


def section(**keys: str) -> str:
    return "\n  [workspaces.wakeups]\n" + "".join(f"  {k} = {v}\n" for k, v in keys.items())


def test_the_limits_reach_each_agent_of_the_workspace_typed() -> None:
    config = parse(DEFAULT + section(min_delay='"2m"', per_day="30"), SOURCE, {})
    [agent], _ = runtime_roster(config)
    assert agent.wakeups == WakeupLimits(min_delay_s=120.0, per_day=30)


def test_without_the_section_the_defaults_apply() -> None:
    [agent], _ = runtime_roster(parse(DEFAULT, SOURCE, {}))
    assert agent.wakeups == WakeupLimits(min_delay_s=10.0, per_day=200)


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({"min_delay": '"-5s"'}, "workspaces[0].wakeups.min_delay"),
        ({"min_delay": '"0s"'}, "workspaces[0].wakeups.min_delay"),
        ({"min_delay": '"soon"'}, "workspaces[0].wakeups.min_delay"),
        ({"per_day": "0"}, "workspaces[0].wakeups.per_day"),
        ({"per_day": "-3"}, "workspaces[0].wakeups.per_day"),
        ({"max": "3"}, "workspaces[0].wakeups.max"),
    ],
    ids=["negative-floor", "zero-floor", "not-a-duration", "zero-cap", "negative-cap", "typo"],
)
def test_nonsense_is_refused_naming_the_key(keys: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(DEFAULT + section(**keys), SOURCE, {})
    assert expected in str(caught.value), str(caught.value)


def test_check_config_takes_the_section_and_names_a_negative_floor(tmp_path: Path) -> None:
    path = tmp_path / "switchboard.toml"
    path.write_text(DEFAULT + section(min_delay='"30s"', per_day="50"))
    ok = switchboard("check-config", "--config", path, cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    path.write_text(DEFAULT + section(min_delay='"-30s"'))
    bad = switchboard("check-config", "--config", path, cwd=tmp_path)
    assert bad.returncode != 0
    assert "workspaces[0].wakeups.min_delay" in bad.stdout + bad.stderr
