"""What a reload does to the bots: the workspaces it adds, or whose bots it changes, have their
bots started again; those it removes, stopped; the others are not touched."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from adapters.server.live import LiveAdapters
from bridge.parts import Change
from config.diff import bots_unchanged


async def restart(
    live: LiveAdapters,
    change: Change,
    *,
    serve: Callable[[str], bool],
    fenced: Callable[[str], AbstractContextManager[None]],
) -> list[str]:
    """The bots of the workspaces `change` adds, changes or removes stopped, and those of
    the added and changed ones started again where this process `serve`s the workspace
    (`fenced` by its lease, as what they start); what failed."""
    report, after = change.report, change.after
    running = {w.id: w for w in change.before.workspaces}
    changed = [
        w.id
        for w in after.workspaces
        if w.id in report.changed and not bots_unchanged(running[w.id], w)
    ]
    for workspace_id in (*changed, *report.removed):
        live.hold(workspace_id, True)
        await live.stop(workspace_id)
        live.remove(workspace_id)
    failures: list[str] = []
    for workspace in after.workspaces:
        if workspace.id in changed or workspace.id in report.added:
            with fenced(workspace.id):
                url, here = after.server.public_url, serve(workspace.id)
                failure = await live.restart(workspace, url, serve=here)
            if failure is not None:
                failures.append(failure)
    for workspace_id in report.removed:
        live.hold(workspace_id, False)
    live.decode()  # what is stored for a removed workspace is dropped
    return failures
