"""`switchboard check-config` (and `run`, which refuses the same file) as an admin runs it on a
file with several mistakes: every one is printed in one pass, structural and cross-reference
alike, each with its key, its line and its fix; a workspace with a broken part does not keep
the others from being checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.cli_process import switchboard

MANY = """\
[storage]
path = "{db}"

[provider]
kind = "offline"

[[workspaces]]
id = "local"
queue_mode = "stear"
default_agent = "asistant"

  [workspaces.console]
  operator = "you"

  [[workspaces.operators]]
  id = "you"
  primary = true

  [[workspaces.agents]]
  id = "assistant"
  tools = ["sleep", "disk_usag"]

  [[workspaces.tools]]
  name = "disk_usage"
  description = "Free disk space"
  command = ["df", "-h", "."]
  timeout = 10

  [[workspaces.schedules]]
  id = "pulse"
  agent = "assistnt"
  every = "1h"
  prompt = "Check in."

[[workspaces]]
id = "team"
default_agnet = "helper"
telegram = {{ bot_token = "1:T" }}
operators = [{{ id = "ann", primary = true, telegram_user_id = 7 }}]
agents = [{{ id = "helper" }}]

  [[workspaces.schedules]]
  id = "digest"
  agent = "helper"
  every = "1d"
  prompt = "Sum up the day."
  deliver = "bob"
"""

TOOLS = "['disk_usage', 'notify_operator', 'schedule_wakeup', 'sleep', 'spawn_agent']"
EVERY_PROBLEM = [
    "7 problem(s):",
    "  - workspaces[0].queue_mode (\"local\"): Input should be 'steer', 'followup', 'collect' or"
    " 'interrupt' (line 9)",
    '  - workspaces[0].tools[0].timeout ("local", "disk_usage"): unknown key; did you mean'
    " timeout_s? (line 27)",
    '  - workspaces[1].default_agnet ("team"): unknown key; did you mean default_agent? (line 37)',
    "  - workspaces[0].default_agent (\"local\"): 'asistant' is not one of the agents:"
    " ['assistant'] (did you mean 'assistant'?) (line 10)",
    '  - workspaces[0].agents[0].tools ("local", "assistant"): agent \'assistant\' lists unknown'
    " tool 'disk_usag' (did you mean 'disk_usage'?); define it under [[workspaces.tools]] or use"
    f" one of {TOOLS} (line 21)",
    '  - workspaces[0].schedules[0].agent ("local", "pulse"): schedule \'pulse\': agent ='
    " 'assistnt' is not an agent of this workspace (did you mean 'assistant'?); use one of"
    " ['assistant'] (line 31)",
    '  - workspaces[1].schedules[0].deliver ("team", "digest"): schedule \'digest\': deliver ='
    " 'bob' must be \"primary\", \"silent\" or an operator id: ['ann'] (line 47)",
]


def many_mistakes(tmp_path: Path, text: str = MANY) -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(text.format(db=tmp_path / "sb.db"))
    return path


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_every_mistake_of_a_file_is_told_at_once(tmp_path: Path, command: str) -> None:
    path = many_mistakes(tmp_path)
    result = switchboard(command, "--config", path)
    assert result.returncode == 2
    assert result.stdout == ""
    first = f"switchboard: {path}: {EVERY_PROBLEM[0]}"
    assert result.stderr.splitlines() == [first, *EVERY_PROBLEM[1:]]
    assert not (tmp_path / "sb.db").exists(), "nothing started"


def test_an_unset_variable_and_the_other_mistakes_come_together(tmp_path: Path) -> None:
    text = MANY.replace('operator = "you"', 'operator = "${{CONSOLE_OPERATOR}}"')
    path = many_mistakes(tmp_path, text)
    result = switchboard("check-config", "--config", path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"switchboard: {path}: 1 environment variable(s) not set:",
        "  - CONSOLE_OPERATOR (used by workspaces[0].console.operator)",
        "Set them, or write the values in the file ($${NAME} is a literal ${NAME}).",
        f"{path}: {EVERY_PROBLEM[0]}",
        *EVERY_PROBLEM[1:],
    ], "the key that uses the variable is not also called wrong"


def test_a_part_too_broken_to_check_leaves_the_rest_checked(tmp_path: Path) -> None:
    """The agent has no id: what names it cannot be checked, and is not called wrong; the
    other workspace's mistakes are still told."""
    text = MANY.replace('  id = "assistant"\n  tools', '  name = "assistant"\n  tools')
    result = switchboard("check-config", "--config", many_mistakes(tmp_path, text))
    lines = result.stderr.splitlines()
    missing = '  - workspaces[0].agents[0].id ("local", "assistant"): required key is missing'
    missing += " (line 19)"
    assert missing in lines
    assert EVERY_PROBLEM[3] in lines and EVERY_PROBLEM[7] in lines
    assert not any("asistant" in line or "assistnt" in line for line in lines), lines


def test_a_file_with_no_mistake_is_ok(tmp_path: Path) -> None:
    fixed = (
        MANY.replace('"stear"', '"steer"')
        .replace('"asistant"', '"assistant"')
        .replace('"disk_usag"', '"disk_usage"')
        .replace("timeout =", "timeout_s =")
        .replace('"assistnt"', '"assistant"')
        .replace("default_agnet", "default_agent")
        .replace('deliver = "bob"', 'deliver = "ann"')
    )
    path = many_mistakes(tmp_path, fixed)
    result = switchboard("check-config", "--config", path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: OK\n")


def test_a_misspelt_key_is_read_as_the_key_it_names_and_its_value_checked(
    tmp_path: Path,
) -> None:
    text = MANY.replace('default_agnet = "helper"', 'default_agnet = "helpr"')
    result = switchboard("check-config", "--config", many_mistakes(tmp_path, text))
    lines = result.stderr.splitlines()
    assert EVERY_PROBLEM[3] in lines
    assert (
        "  - workspaces[1].default_agent (\"team\"): 'helpr' is not one of the agents:"
        " ['helper'] (did you mean 'helper'?) (line 37)"
    ) in lines, "the line of the key as written"
    assert not any("required key is missing" in line for line in lines), lines
