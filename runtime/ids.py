"""Record ids: a readable prefix and a 128-bit hex part, time-ordered as a UUIDv7 is: 48 bits
of the wall clock's milliseconds, then 80 random bits.

Nothing relies on the order (two ids of one millisecond are in random order, and a clock may
step back); it is there for the database: each table's unique index on `id` then takes new
ids at its end, as it takes sequence numbers, instead of at a random page each, so a group
of commits writes one page of that index rather than one per row."""

import os
import threading
import time

_POOL = 4000  # random bytes read at a time: one system call for 400 ids
_random = b""
_used = _POOL
_lock = threading.Lock()


def new_id(prefix: str) -> str:
    global _random, _used
    with _lock:
        if _used + 10 > len(_random):
            _random, _used = os.urandom(_POOL), 0
        part = _random[_used : _used + 10]
        _used += 10
    return f"{prefix}_{time.time_ns() // 1_000_000 & 0xFFFFFFFFFFFF:012x}{part.hex()}"
