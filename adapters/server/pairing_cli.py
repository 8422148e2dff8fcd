"""`switchboard pairing list | approve CODE | deny CODE | revoke`: DM pairing from the
terminal. Each is the store operation a button or the console performs; the running process
(this one's database, or any replica's) tells the sender and writes the ledger event within
a few seconds. An unknown or expired code exits 1 and says which."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import time
from typing import Any

from adapters.platforms import platforms
from config.schema import SwitchboardConfig


def add_parser(sub: Any, config: argparse.ArgumentParser) -> None:
    text = "pending pairing codes, and approving, denying or revoking them"
    pairing = sub.add_parser("pairing", parents=[config], help=text, description=text)
    actions = pairing.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", parents=[config], help="pending codes and paired senders")
    for verb in ("approve", "deny"):
        one = actions.add_parser(verb, parents=[config], help=f"{verb} a pending code")
        one.add_argument("code", help="the 8-character code the sender was given")
    revoke = actions.add_parser(
        "revoke", parents=[config], help="a paired sender is no longer an operator"
    )
    revoke.add_argument("--workspace", required=True)
    revoke.add_argument("--platform", required=True, choices=[p.name for p in platforms()])
    revoke.add_argument("--user", required=True, help="the sender's id on that platform")


def pairing_command(args: argparse.Namespace, config: SwitchboardConfig) -> int:
    return asyncio.run(_command(args, config))


async def _command(args: argparse.Namespace, config: SwitchboardConfig) -> int:
    from bridge.pairing import revoke_sender
    from bridge.store.pairing import PairingStatus, PairingStore, decide
    from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
    from bridge.store.store import BridgeStore
    from runtime.store.store import Store

    store = await Store.open(
        config.storage.location, extra_migrations={"bridge": BRIDGE_MIGRATIONS}, exclusive=False
    )
    bridge_store = BridgeStore(store)
    records = PairingStore(store)
    by = f"cli ({getpass.getuser()})"
    try:
        if args.action == "list":
            print("\n".join(await pairing_lines(records, time.time())))
            return 0
        if args.action == "revoke":
            paired = await revoke_sender(
                bridge_store, records, args.workspace, args.platform, args.user, by
            )
            if paired is None:
                print(f"{args.user} on {args.platform} is not paired with {args.workspace}")
                return 1
            print(f"revoked: {args.user} on {args.platform} is no longer an operator")
            return 0
        code = args.code.strip().upper()
        request = await records.request(code)
        if request is None:
            print(f"no pairing code {code} (check it, or run `switchboard pairing list`)")
            return 1
        if request.status is not PairingStatus.PENDING:
            print(f"pairing code {code} was already answered: {request.status}")
            return 1
        if request.expires_at < time.time():
            print(f"pairing code {code} has expired; the sender can write again for a new one")
            return 1
        approve = args.action == "approve"
        async with bridge_store.write() as tx:
            decide(tx, request, PairingStatus.APPROVED if approve else PairingStatus.DENIED, by)
        who = f"{request.sender_name or request.sender_id} on {request.platform}"
        print(f"{'approved' if approve else 'denied'}: {who} ({request.workspace_id})")
        return 0
    finally:
        await store.close()


async def pairing_lines(records: Any, now: float) -> list[str]:
    """Pending codes (workspace, platform, sender, age) and paired senders, for `pairing
    list` and `status`."""
    pending = await records.pending(now)
    lines = [f"Pairing codes waiting for approval: {len(pending) or 'none.'}"]
    lines += [
        f"  {r.code}  {r.workspace_id} {r.platform} {r.sender_id}"
        f" ({r.sender_name or 'no name'}), {round((now - r.created_at) / 60)} min ago"
        for r in pending
    ]
    paired = await records.all_paired()
    lines.append(f"Paired operators: {len(paired) or 'none.'}")
    lines += [
        f"  {p.workspace_id} {p.platform} {p.sender_id} ({p.sender_name or 'no name'}),"
        f" approved by {p.approved_by}"
        for p in paired
    ]
    return lines
