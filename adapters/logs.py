"""Log lines with structured fields (`key=value`), and never a secret."""

from __future__ import annotations

import logging
from pathlib import Path

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        fields = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        if not fields:
            return base
        return base + " " + " ".join(f"{k}={v!r}" for k, v in sorted(fields.items()))


def configure(log_file: Path | None, level: int = logging.INFO) -> None:
    handler: logging.Handler
    if log_file is None:
        handler = logging.StreamHandler()
    else:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(KeyValueFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2", "aiosqlite", "anthropic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
