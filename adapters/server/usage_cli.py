"""`switchboard usage`: what each workspace's model calls cost, read from the store by another
process than the one running (as `switchboard status` reads it, whether Switchboard runs or
not): today and this month, by agent, operator, schedule and session, each budget against its
limit, and the last days one line each, in the workspace's timezone. A table for people, or
`--json` for scripts (`usage_view.py` renders both from `bridge/spend/report.py`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.errors import ConfigError
from config.schema import SwitchboardConfig, WorkspaceConfig
from config.timing import zone

if TYPE_CHECKING:
    from adapters.server.usage_view import Shown

DAYS = 30  # as the console's usage page shows
MOST_DAYS = 366
DESCRIPTION = (
    "What the model calls cost, for each workspace of the config: today and this month in "
    "dollars, tokens in (of which cached: read from or written to the prompt cache), tokens "
    "out and calls, and of this month what memory (keeping what should last before a "
    "compaction or /new) and compaction (summaries) cost apart; the same by agent, by "
    "operator, by schedule and trigger, for the sessions that used the most (by name) and "
    "per day (the days with use); and each "
    "budget, how much of it is used and when it renews. Days and months are the workspace's "
    "(its `timezone`). It reads the database while Switchboard runs or not, and needs none "
    "of the tokens the config names."
)
NO_DATABASE = (
    "No model calls yet: there is no database at {path}, so Switchboard has not run here. "
    "Start it with `switchboard run --config {config}`; what its agents spend shows here."
)
UNSET = "Not set here, and not needed to read the usage: {names}."
NO_WORKSPACE = "{config}: no workspace {id!r} (there are: {known}); pass one of them to --workspace"


def add_parser(sub: Any, config: argparse.ArgumentParser) -> None:
    text = "what the model calls cost: today, this month, per day, by agent, against budgets"
    usage = sub.add_parser("usage", parents=[config], help=text, description=DESCRIPTION)
    usage.add_argument(
        "--workspace", metavar="ID", help="only this workspace (else each one in the config)"
    )
    usage.add_argument(
        "--days",
        metavar="N",
        type=_days,
        default=DAYS,
        help=f"a line per day for the last N days, today included (default {DAYS}; 0: none)",
    )
    usage.add_argument(
        "--json",
        action="store_true",
        help=(
            "print one JSON document instead, for scripts: the same numbers (tokens exact, "
            "cost_usd unrounded, dates ISO 8601), its keys always present"
        ),
    )


def _days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        days = -1
    if not 0 <= days <= MOST_DAYS:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of days from 0 to {MOST_DAYS}")
    return days


def usage_command(
    args: argparse.Namespace, path: Path, config: SwitchboardConfig, unset: Sequence[str] = ()
) -> int:
    """`unset`: variables the config names that this environment lacks (tokens reading the
    store does not use), said on stderr so that stdout stays the table or the JSON."""
    from adapters.server.status_cli import no_database
    from adapters.server.usage_view import document, table

    workspaces = _chosen(config, args.workspace, path)
    missing = no_database(config) is not None
    if missing:  # with --json, said on stderr, and every number is zero: none was recorded
        said = NO_DATABASE.format(path=config.storage.path, config=path)
        print(said, file=sys.stderr if args.json else sys.stdout)
        if not args.json:
            return 0
    if unset:
        print(UNSET.format(names=", ".join(unset)), file=sys.stderr)
    now, shown = asyncio.run(_read_or_zero(config, workspaces, args.days, missing))
    if args.json:
        print(json.dumps(document(shown, now), indent=2))
    else:
        print("\n\n".join(table(s, now) for s in shown))
    return 0


def _chosen(config: SwitchboardConfig, wanted: str | None, path: Path) -> list[WorkspaceConfig]:
    if wanted is None:
        return list(config.workspaces)
    found = [w for w in config.workspaces if w.id == wanted]
    if not found:
        known = ", ".join(w.id for w in config.workspaces)
        raise ConfigError(NO_WORKSPACE.format(config=path, id=wanted, known=known))
    return found


async def _read_or_zero(
    config: SwitchboardConfig, workspaces: Sequence[WorkspaceConfig], days: int, missing: bool
) -> tuple[float, list[Shown]]:
    """From the configured database; with none there, from an empty one made and dropped
    here, so that `--json` still prints every key, each at zero."""
    if not missing:
        return await _read(config.storage.location, workspaces, days)
    with tempfile.TemporaryDirectory(prefix="switchboard-usage-") as empty:
        return await _read(Path(empty) / "empty.db", workspaces, days)


async def _read(
    location: str | Path, workspaces: Sequence[WorkspaceConfig], days: int
) -> tuple[float, list[Shown]]:
    from dataclasses import replace

    from adapters.server.usage_view import Shown
    from bridge.session_names import costliest_sessions, session_labels
    from bridge.spend.report import usage_report
    from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
    from bridge.store.store import BridgeStore
    from runtime.store.store import Store
    from runtime.store.usage import UsageFilter

    store = await Store.open(
        location, extra_migrations={"bridge": BRIDGE_MIGRATIONS}, exclusive=False
    )
    try:
        now = store.clock.wall()
        shown = []
        for w in workspaces:
            report = await usage_report(store.usage, w, now, days)
            report = replace(report, sessions=await costliest_sessions(store.usage, report, now))
            ever = await store.usage.total(UsageFilter(0.0, agent_prefix=f"{w.id}/"))
            names = await session_labels(store, BridgeStore(store), w.id, zone(w.timezone))
            shown.append(Shown(report, ever_called=ever.calls > 0, names=names))
        return now, shown
    finally:
        await store.close()
