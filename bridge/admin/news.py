"""What a live console page says aloud (its polite live region) as turns start and end: only
those changes, each in a line a person reads, naming the session as the page does ("Telegram,
DM with user1001: turn ended: answered in 2.1 s"). Taken from the ledger's turn events, so a
turn that starts and ends between two reads of the page is said too; an ended turn is said
in its page's words (`history.outcome`, read from its record)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bridge import texts
from bridge.admin.history import outcome
from runtime.events import Event
from runtime.payloads import RunRecovered, TurnFinished, TurnStarted
from runtime.records import RunStatus
from runtime.store.store import Store

NEWS = (TurnStarted, TurnFinished, RunRecovered)  # the events a page says something of
STARTED = "{name}: turn started"
WENT_ON = "{name}: turn went on after a restart"
ENDED = "{name}: turn ended: {how}"


def is_news(event: Event) -> bool:
    return isinstance(event.data, NEWS)


async def turn_news(store: Store, events: Sequence[Event], names: Mapping[str, str]) -> list[str]:
    """What the page says of `events` (turn events, oldest first) of its sessions (`names`:
    each one's name by its id; the events of other sessions are not the page's)."""
    said = []
    for event in events:
        name = names.get(event.session_id or "")
        if name is None:
            continue
        if isinstance(event.data, TurnStarted):
            said.append((WENT_ON if event.data.resumed else STARTED).format(name=name))
            continue
        run = await store.run(event.run_id) if event.run_id else None
        if run is not None and run.status is not RunStatus.RUNNING:
            how = outcome(run)
        else:  # its record not yet read here as ended (or gone): the event's own word
            how = texts.RUN_STATUS_WORDS[_status(event)]
        said.append(ENDED.format(name=name, how=how))
    return said


def _status(event: Event) -> RunStatus:
    data = event.data
    if isinstance(data, TurnFinished):
        return data.outcome
    return data.status if isinstance(data, RunRecovered) else RunStatus.INTERRUPTED
