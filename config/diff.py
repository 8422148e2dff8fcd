"""What a new config changes in the running one, and the verdict of applying it.

Only workspaces change live; a change to any other section (server, storage, provider, queue,
logging, retention, attachments) needs a restart, and until then the running values stay."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from config.changes import changes
from config.errors import ConfigError
from config.loading import parse
from config.providers import DEFAULT, Link
from config.schema import SwitchboardConfig, WorkspaceConfig
from config.wakeups import WakeupsConfig

# Sections read afresh wherever they are used: they change with a reload (the console's logins
# are checked against the current `[admin]`).
LIVE_SECTIONS = frozenset({"workspaces", "admin"})


class ReloadReport(BaseModel):
    """A reload's verdict: `ok` with what was applied, or the errors that refused it."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    restart_needed: tuple[str, ...] = ()
    # What changed, key by key (config/changes.py): a line per changed workspace
    # (`local: agents.assistant.model: claude-a -> claude-b; schedules.pulse added`), and
    # one per section that needs a restart (`queue: cap: 10 -> 20`). Never a secret's value.
    details: tuple[str, ...] = ()
    restart_details: tuple[str, ...] = ()
    live_details: tuple[str, ...] = ()  # the other sections applied live: `admin: token changed`
    errors: str = ""  # as check-config prints them

    @property
    def applied(self) -> tuple[str, ...]:
        """Every workspace whose adapters restarted (or stopped, when removed)."""
        return (*self.changed, *self.added, *self.removed)

    def lines(self) -> list[str]:
        """The verdict as an admin reads it."""
        if not self.ok:
            return ["refused; the running config stays:", self.errors]
        out = [
            line
            for what, ids, details in (
                ("changed", self.changed, self.details),
                ("added", self.added, ()),
                ("removed", self.removed, ()),
            )
            if ids
            for line in [f"workspaces {what}: {', '.join(ids)}", *(f"  {d}" for d in details)]
        ] or ["no workspace changed"]
        out += [f"applied: {d}" for d in self.live_details]
        if self.restart_needed:
            out.append(
                f"needs a restart to take effect (running values kept): "
                f"{', '.join(self.restart_needed)}"
            )
            out += [f"  {d}" for d in self.restart_details]
        if self.errors:  # applied, but a bot refused to start
            out.append(f"not running (fix it and reload again): {self.errors}")
        return out


AUTOMATION = ("schedules", "triggers")  # read where they are used: no bot restarts for them


def bots_unchanged(old: WorkspaceConfig, new: WorkspaceConfig) -> bool:
    """Whether only the workspace's schedules, triggers, budgets, wake-up limits or timezone
    differ: its bots run on as they are (the schedules' clock, the doors, the budget gate and
    the agents' wake-up limits read the new config)."""
    cleared: dict[str, object] = {key: [] for key in AUTOMATION}
    cleared |= {"budgets": [], "timezone": "UTC", "wakeups": WakeupsConfig()}
    return old.model_copy(update=cleared) == new.model_copy(update=cleared)


def plan(
    running: SwitchboardConfig, new: SwitchboardConfig
) -> tuple[SwitchboardConfig, ReloadReport]:
    """The config to run now (the new workspaces; every other section as running) and the
    report of what differs."""
    fields = type(running).model_fields
    restart = tuple(
        name
        for name in fields
        if name not in LIVE_SECTIONS and getattr(running, name) != getattr(new, name)
    )
    live = {name: getattr(new, name) for name in LIVE_SECTIONS if name in fields}
    effective = running.model_copy(update=live)
    old = {w.id: w for w in running.workspaces}
    now = {w.id: w for w in new.workspaces}
    # The terminal console reads stdin from the start: its operator is fixed until then.
    restart += tuple(
        f"workspaces.{i}.console"
        for i in now
        if (old[i].console if i in old else None) != now[i].console
    )
    restart += models_changed(running, new)
    changed = tuple(i for i in now if i in old and now[i] != old[i])
    secrets = [*running.secret_values(), *new.secret_values()]

    def said(name: str, before: object, after: object) -> str:
        return f"{name}: {'; '.join(changes(before, after, secrets))}"

    report = ReloadReport(
        ok=True,
        changed=changed,
        details=tuple(said(i, old[i], now[i]) for i in changed),
        live_details=tuple(
            said(name, getattr(running, name), getattr(new, name))
            for name in sorted(LIVE_SECTIONS - {"workspaces"})
            if name in fields and getattr(running, name) != getattr(new, name)
        ),
        restart_details=tuple(
            said(name, getattr(running, name), getattr(new, name))
            for name in restart
            if name in fields
        ),
        added=tuple(i for i in now if i not in old),
        removed=tuple(i for i in old if i not in now),
        restart_needed=restart,
    )
    return effective, report


def models_changed(running: SwitchboardConfig, new: SwitchboardConfig) -> tuple[str, ...]:
    """The agents whose provider, model or fallback differ (each agent's chain is built at the
    start, with its providers' connections and health): a restart applies them."""

    def chains(config: SwitchboardConfig) -> dict[str, list[Link]]:
        return {
            f"{w.id}/{a.id}": config.chain_of(w, a) for w in config.workspaces for a in w.agents
        }

    before, after = chains(running), chains(new)
    default = [Link(DEFAULT, running.provider)]
    return tuple(
        f"the provider, model or fallback of agent {agent}"
        for agent, chain in after.items()
        if chain != before.get(agent, default)
    )


def unapplied(applied: SwitchboardConfig, text: str, path: Path) -> str:
    """What the file's `text` changes in the config last applied from it (the workspaces and
    sections, named), or "" when nothing: an edit written into it would apply those too."""
    try:
        on_disk = parse(text, path)
    except ConfigError:
        return "and they do not validate: see check-config"
    _, report = plan(applied, on_disk)
    sections = [
        name
        for name in type(applied).model_fields
        if name != "workspaces" and getattr(applied, name) != getattr(on_disk, name)
    ]
    return ", ".join([*(f"workspace {i}" for i in report.applied), *sections])
