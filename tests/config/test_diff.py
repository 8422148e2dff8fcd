"""What a new config changes in the running one: workspaces by id; every other section is
reported as needing a restart and keeps its running value."""

from __future__ import annotations

from pathlib import Path

from config.diff import bots_unchanged, plan
from config.loading import parse
from config.schema import SwitchboardConfig

BASE = """
[queue]
cap = 10

[[workspaces]]
id = "acme"
default_agent = "a"
console = { operator = "ann" }
operators = [{ id = "ann", primary = true }]
agents = [{ id = "a" }]

[[workspaces]]
id = "globex"
default_agent = "a"
telegram = { bot_token = "1:T" }
operators = [{ id = "gus", primary = true, telegram_user_id = 7 }]
agents = [{ id = "a" }]
"""


def config(text: str = BASE) -> SwitchboardConfig:
    return parse(text, Path("switchboard.toml"), {})


def test_an_identical_config_changes_nothing() -> None:
    effective, report = plan(config(), config())
    assert report.ok and report.applied == () and report.restart_needed == ()
    assert report.lines() == ["no workspace changed"]
    assert effective == config()


def test_workspaces_changed_added_and_removed_by_id() -> None:
    new = BASE.replace("telegram_user_id = 7", "telegram_user_id = 8").replace(
        'id = "acme"', 'id = "initech"'
    )
    _, report = plan(config(), config(new))
    assert (report.changed, report.added, report.removed) == (("globex",), ("initech",), ("acme",))


def test_other_sections_keep_their_running_values_and_need_a_restart() -> None:
    effective, report = plan(config(), config(BASE.replace("cap = 10", "cap = 3")))
    assert report.restart_needed == ("queue",)
    assert effective.queue.cap == 10
    assert report.lines()[-2:] == [
        "needs a restart to take effect (running values kept): queue",
        "  queue: cap: 10 -> 3",
    ]


def test_the_terminal_console_of_a_workspace_needs_a_restart() -> None:
    new = BASE.replace('console = { operator = "ann" }', 'console = { operator = "bo" }')
    new = new.replace('operators = [{ id = "ann"', 'operators = [{ id = "bo"')
    _, report = plan(config(), config(new))
    assert report.changed == ("acme",)
    assert report.restart_needed == ("workspaces.acme.console",)


def test_new_wake_up_limits_restart_no_bot() -> None:
    """The agents read their wake-up limits at each request (the runtime's roster is replaced
    on every reload): a changed floor or cap keeps the workspace's bots running."""
    stricter = BASE.replace(
        'id = "globex"\n', 'id = "globex"\nwakeups = { min_delay = "1m", per_day = 20 }\n'
    )
    old, new = config().workspaces[1], config(stricter).workspaces[1]
    assert new.wakeups.per_day == 20
    assert bots_unchanged(old, new)
    renamed = config(stricter.replace('bot_token = "1:T"', 'bot_token = "2:T"')).workspaces[1]
    assert not bots_unchanged(old, renamed)


def test_an_agents_new_model_or_fallback_needs_a_restart() -> None:
    """Each agent's chain is built at the start (its providers' connections and health): a
    reload that changes one says so, and a new agent on the default alone needs none."""
    entry = '\n[providers.backup]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    before = config(entry + BASE)
    after = config(
        entry
        + BASE.replace(
            'agents = [{ id = "a" }]', 'agents = [{ id = "a", model = "m2" }]', 1
        ).replace('agents = [{ id = "a" }]', 'agents = [{ id = "a" }, { id = "b" }]', 1)
    )
    _, report = plan(before, after)
    assert report.restart_needed == ("the provider, model or fallback of agent acme/a",)
    fallback = BASE.replace(
        'agents = [{ id = "a" }]', 'agents = [{ id = "a", fallback = ["backup"] }]'
    )
    _, report = plan(before, config(entry + fallback))
    assert report.restart_needed == (
        "the provider, model or fallback of agent acme/a",
        "the provider, model or fallback of agent globex/a",
    )


def test_what_changed_is_listed_key_by_key_and_a_secret_only_as_changed() -> None:
    new = (
        BASE.replace('bot_token = "1:T"', 'bot_token = "1:NEW-TOKEN"')
        .replace('agents = [{ id = "a" }]\n"""', "")
        .replace("telegram_user_id = 7", "telegram_user_id = 8")
        .replace('agents = [{ id = "a" }]\n', 'agents = [{ id = "a", model = "claude-b" }]\n', 2)
        + '\n[[workspaces.schedules]]\nid = "pulse"\nagent = "a"\nevery = "1h"\nprompt = "x"\n'
    )
    _, report = plan(config(), config(new))
    assert report.lines()[:3] == [
        "workspaces changed: acme, globex",
        "  acme: agents.a.model: none -> claude-b",
        "  globex: telegram.bot_token changed; operators.gus.telegram_user_id: 7 -> 8;"
        " agents.a.model: none -> claude-b; schedules.pulse added",
    ]
    assert "NEW-TOKEN" not in "\n".join(report.lines()) and "1:T" not in str(report.details)


def test_a_change_to_the_admin_section_is_said_and_its_token_never_shown() -> None:
    token = "an-admin-token-of-twenty-chars"
    before = config(BASE + f'\n[admin]\ntoken = "{token}"\n')
    after = config(BASE + '\n[admin]\ntoken = "another-token-of-twenty-chars"\n')
    _, report = plan(before, after)
    assert report.lines() == ["no workspace changed", "applied: admin: token changed"]
