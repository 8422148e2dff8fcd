"""Files that hold what operators said and what the agent did (the database, the inbox, the
logs): made readable and writable by the user Switchboard runs as, and no one else, when
they are created, whatever the umask. SQLite makes a database's `-wal` and `-shm` files with
the database file's own mode, so making that file first is enough for them."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE = 0o600


def create_private(path: Path) -> None:
    """`path` created empty with mode 0600 if it is not there yet (its folders too); one that
    is there is left as it is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
    except FileExistsError:
        return
    os.close(fd)
