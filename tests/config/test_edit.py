"""The console's edits written back into the admin's file: what changed is written, and every
other byte (comments, blank lines, key order, `${VAR}` references) stays as the admin left it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.edit import AgentEdit, OperatorEdit, WorkspaceEdit, edit_workspace, write_atomically
from config.errors import ConfigError
from config.loading import parse
from config.schema import WorkspaceConfig

SOURCE = """\
# Switchboard for ACME. Ask Dana before changing anything here!

[storage]
path   = "var/acme.db"      # aligned on purpose

[[workspaces]]
id = "acme"
default_agent = "helper"   # the one that answers DMs

  [workspaces.telegram]
  bot_token = "${ACME_BOT}"   # from the vault
  chats = [-100, -200]        # ops room, on-call room

  # The humans.
  [[workspaces.operators]]
  id = "alice"
  primary = true
  telegram_user_id = 1001

  [[workspaces.operators]]
  id = "bob"   # night shift
  telegram_user_id = 1002

  [[workspaces.agents]]
  id = "helper"
  system_prompt = "Be brief."   # keep it short
  tools = ["notify_operator"]

[[workspaces]]
id = "globex"
default_agent = "helper"
console = { operator = "gus" }
operators = [{ id = "gus", primary = true }]
agents = [{ id = "helper" }]
"""
ENV = {"ACME_BOT": "123:SECRET"}


def running() -> tuple[WorkspaceConfig, WorkspaceEdit]:
    config = parse(SOURCE, Path("acme.toml"), ENV)
    acme = config.workspaces[0]
    same = WorkspaceEdit(
        queue_mode=acme.queue_mode,
        operators=(
            OperatorEdit("alice", True, {"telegram_user_id": 1001}),
            OperatorEdit("bob", False, {"telegram_user_id": 1002}),
        ),
        remove=frozenset(),
        agents=(AgentEdit("helper", "Be brief.", ("notify_operator",)),),
        allowed={"telegram": (-100, -200)},
    )
    return acme, same


def test_an_edit_that_changes_nothing_leaves_every_byte() -> None:
    acme, same = running()
    assert edit_workspace(SOURCE, acme, same) == SOURCE


def test_only_the_edited_keys_change_and_comments_and_variables_stay() -> None:
    acme, _ = running()
    change = WorkspaceEdit(
        queue_mode="followup",
        operators=(
            OperatorEdit("alice", False, {"telegram_user_id": 1001}),
            OperatorEdit("bob", True, {"telegram_user_id": 2002}),
            OperatorEdit("carol", False, {"telegram_user_id": 3003}),
        ),
        remove=frozenset(),
        agents=(AgentEdit("helper", "Be brief.\nAnd kind.", ("notify_operator", "sleep")),),
        allowed={"telegram": (-100,)},
    )
    edited = edit_workspace(SOURCE, acme, change)
    config = parse(edited, Path("acme.toml"), ENV)
    ws = config.workspaces[0]
    assert ws.queue_mode == "followup"
    assert [(o.id, o.primary, o.telegram_user_id) for o in ws.operators] == [
        ("alice", False, 1001),
        ("bob", True, 2002),
        ("carol", False, 3003),
    ]
    assert ws.agents[0].system_prompt == "Be brief.\nAnd kind."
    assert ws.agents[0].tools == ["notify_operator", "sleep"]
    assert ws.telegram is not None and ws.telegram.chats == [-100]
    assert config.workspaces[1] == parse(SOURCE, Path("x"), ENV).workspaces[1]
    for line in (
        "# Switchboard for ACME. Ask Dana before changing anything here!",
        'path   = "var/acme.db"      # aligned on purpose',
        'default_agent = "helper"   # the one that answers DMs',
        '  bot_token = "${ACME_BOT}"   # from the vault',
        "  # The humans.",
        'console = { operator = "gus" }',
        'operators = [{ id = "gus", primary = true }]',
    ):
        assert line + "\n" in edited, line
    assert "# night shift" in edited and "# keep it short" in edited
    assert "123:SECRET" not in edited, "a variable is never replaced by its value"
    head, tail = SOURCE.split('[[workspaces]]\nid = "globex"')
    assert edited.endswith('[[workspaces]]\nid = "globex"' + tail), "globex byte for byte"
    assert edited.startswith(head[: head.index("default_agent")]), "everything before acme's keys"


def test_an_operator_removed_and_one_added() -> None:
    acme, _ = running()
    change = WorkspaceEdit(
        queue_mode="steer",
        operators=(
            OperatorEdit("alice", True, {"telegram_user_id": 1001}),
            OperatorEdit("dave", False, {"telegram_user_id": 4004}),
        ),
        remove=frozenset({1}),
        agents=(),
    )
    edited = edit_workspace(SOURCE, acme, change)
    ws = parse(edited, Path("acme.toml"), ENV).workspaces[0]
    assert [o.id for o in ws.operators] == ["alice", "dave"]
    assert "bob" not in edited and "queue_mode" not in edited, "the default is not written"


def test_an_edit_to_an_inline_list_of_operators() -> None:
    config = parse(SOURCE, Path("acme.toml"), ENV)
    globex = config.workspaces[1]
    change = WorkspaceEdit(
        queue_mode="steer",
        operators=(OperatorEdit("gus", True), OperatorEdit("hank", False, {"slack_user_id": "U9"})),
        remove=frozenset(),
        agents=(),
    )
    edited = edit_workspace(SOURCE, globex, change)
    assert [o.id for o in parse(edited, Path("x"), ENV).workspaces[1].operators] == ["gus", "hank"]


def test_a_workspace_not_in_the_file_is_an_error() -> None:
    acme, same = running()
    with pytest.raises(ConfigError, match="not in the file"):
        edit_workspace(SOURCE.replace('id = "acme"', 'id = "renamed"'), acme, same)


def test_the_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "switchboard.toml"
    path.write_text(SOURCE)
    path.chmod(0o600)
    write_atomically(path, SOURCE + "# edited\n")
    assert path.read_text().endswith("# edited\n")
    assert path.stat().st_mode & 0o777 == 0o600, "the file keeps its permissions (secrets)"
    assert [p.name for p in tmp_path.iterdir()] == ["switchboard.toml"]


@given(typed=st.text(alphabet=st.sampled_from('$${}AB_ \n"\\x'), max_size=24))
def test_whatever_is_typed_loads_as_typed_and_never_from_the_environment(typed: str) -> None:
    """`${ACME_BOT}` typed as a system prompt would otherwise load as the bot's token: an
    admin of one workspace reading the process's secrets. (The other free-text fields, ids
    and channels, allow no `$`.)"""
    acme, same = running()
    change = replace(same, agents=(AgentEdit("helper", typed, ("notify_operator",)),))
    edited = parse(edit_workspace(SOURCE, acme, change), Path("acme.toml"), ENV).workspaces[0]
    assert edited.agents[0].system_prompt == typed
