"""Applying a config to the running process: the file read again (`switchboard reload`, SIGHUP,
the console's Reload), or a workspace's edit from the console written into it first. It walks
the parts of the process, each reconfiguring itself (`bridge/parts.py`)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Protocol

from adapters.server.reloading import report_fields
from adapters.server.role import Role
from bridge.parts import Change, Parts, Refused
from config.current import CurrentConfig
from config.diff import ReloadReport, plan, unapplied
from config.edit import STALE, WorkspaceEdit, edit_workspace, version, write_atomically
from config.errors import ConfigError, without_folder
from config.loading import env_file, load, parse, read_text
from config.schema import SwitchboardConfig, WorkspaceConfig
from config.secrets import Secrets, known_secrets

log = logging.getLogger(__name__)

NOT_FROM_A_FILE = "this process was not started from a config file"


class Running(Protocol):
    """What a reload changes in the running process (the App)."""

    @property
    def current(self) -> CurrentConfig: ...
    @property
    def secrets(self) -> Secrets: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def parts(self) -> Parts: ...
    @property
    def role(self) -> Role: ...
    @property
    def console_mounted(self) -> bool: ...


class Reloader:
    def __init__(self, app: Running, config: SwitchboardConfig) -> None:
        self._app = app
        # The file's config as last applied (its restart-needed sections included): what
        # the console's edit expects to find on disk.
        self._applied = config
        self._editing = asyncio.Lock()

    async def reload(self) -> ReloadReport:
        """Read the file the App was started from again and apply it (see `apply`)."""
        path = self._app.path
        if path is None:
            return refused(NOT_FROM_A_FILE)
        try:
            new = load(path)
        except ConfigError as exc:
            return refused(str(exc))
        return await self.apply(new)

    async def apply(self, new: SwitchboardConfig) -> ReloadReport:
        """Run `new` (validated already, as `config.load` does): each part of the process is
        reconfigured in turn (`App._parts_in_order`). Sections that cannot change live keep
        their running values and are reported as needing a restart."""
        app = self._app
        async with app.role.changing:
            if app.role.stopping:
                return refused("Switchboard is stopping; start it again to apply the file")
            effective, report = plan(app.current(), new)
            app.secrets.learn(known_secrets(new, app.path))  # before anything shows them
            if effective.console_enabled() and not app.console_mounted:
                restart = (*report.restart_needed, "admin")
                report = report.model_copy(update={"restart_needed": restart})
            change = Change(app.current(), effective, report)
            try:
                await app.parts.reconfigure(change)
            except Refused as exc:
                return refused(f"{app.path or 'the new config'}: {exc}")
            self._applied = new
            if change.failures:
                report = report.model_copy(update={"errors": "\n".join(change.failures)})
            log.info("config applied", extra=report_fields(report))
            return report

    async def edit(self, workspace_id: str, change: WorkspaceEdit) -> ReloadReport:
        """The console's edit of a workspace: written into the file (only the keys it
        changes), validated as check-config does before anything is written, then applied.
        Refused when the file holds changes not applied yet: they are not this admin's. What
        it says names the file by its name alone: a workspace's admin is not told where the
        server keeps it."""
        report = await self._edit(workspace_id, change)
        path = self._app.path
        if report.errors and path is not None:
            report = report.model_copy(update={"errors": without_folder(report.errors, path)})
        return report

    async def _edit(self, workspace_id: str, change: WorkspaceEdit) -> ReloadReport:
        app = self._app
        async with self._editing:
            workspace = app.current.workspace(workspace_id)
            if app.path is None:
                return refused(NOT_FROM_A_FILE)
            if app.role.stopping:
                return refused("Switchboard is stopping; the edit was not made")
            if workspace is None:
                return refused(f"workspace {workspace_id} is no longer configured")
            if change.based_on is not None and change.based_on != version(workspace):
                return refused(STALE)
            try:
                new = self._edited(app.path, workspace, change)
            except ConfigError as exc:
                return refused(str(exc))
            return await self.apply(new)

    def _edited(
        self, path: Path, workspace: WorkspaceConfig, change: WorkspaceEdit
    ) -> SwitchboardConfig:
        """The file with the edit, written and parsed; a `ConfigError` leaves it untouched."""
        original = read_text(path)
        pending = unapplied(self._applied, original, path)
        if pending:
            raise ConfigError(
                f"{path} has changes not yet applied ({pending}); reload it first "
                "(switchboard reload, or the global admin's Reload), then edit"
            )
        text = edit_workspace(original, workspace, change)
        new = parse(text, path, {**env_file(path), **os.environ})
        write_atomically(path, text)
        return new


def refused(errors: str) -> ReloadReport:
    report = ReloadReport(ok=False, errors=errors)
    log.warning("config refused; the running config stays", extra=report_fields(report))
    return report
