"""Log lines: one per event with structured fields, to stderr or a rotated file, and never a
secret, whatever library logged it (HTTP clients log request URLs, and a Telegram URL
carries the bot token).

Two formats: `text` (`time LEVEL logger: message key=value ...`, a traceback below it on
indented lines) for people, `json` (one object per line) for log collectors."""

from __future__ import annotations

import json
import logging
import re
import sys
import textwrap
from collections.abc import Iterable
from datetime import UTC, datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from adapters.private_files import create_private
from config.schema import LoggingConfig
from config.secret_scan import SecretScan
from config.secrets import MASK, Secrets

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}
# Libraries that log every request at INFO; their lines are wanted only when debugging.
_CHATTY = ("httpx", "httpx2", "httpcore", "aiosqlite", "anthropic")  # httpx2: the SDKs'
TRACE_INDENT = "    "  # every line of a traceback starts so: a reader sees where a record ends


# A DM pairing code, wherever a line quotes a message that carries one (python-telegram-bot
# logs the parameters of each call at debug level): it is a one-time credential.
PAIRING_CODE = re.compile(r"(?i)(pairing code(?: is)?|/approve|/deny)\s+[A-HJ-NP-Z2-9]{8}\b")
PAIRING_WORDS = ("pairing code", "/approve", "/deny")  # one of them starts every match


class Redactor(logging.Filter):
    """Masks every secret the process knows (`config.secrets`: a set the running process
    keeps learning, as a reload brings new tokens), and every pairing code, in a record's
    message, arguments, traceback and extra fields. Attached to every handler, so it sees
    records of every logger.

    A record is first looked at whole by `SecretScan` (`config/secret_scan.py`): one that
    holds no secret's form and no word a pairing code follows, as most do, is not searched
    field by field (two lines a turn: issue 45)."""

    def __init__(self, secrets: Secrets | Iterable[str]) -> None:
        super().__init__()
        self._secrets = secrets if isinstance(secrets, Secrets) else Secrets(secrets)
        self._scan = SecretScan(self._secrets, PAIRING_WORDS)

    def redact(self, text: str) -> str:
        text = PAIRING_CODE.sub(lambda m: f"{m.group(1)} {MASK}", text)
        return self._secrets.mask(text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        extra = [
            (key, value if isinstance(value, str) else repr(value))
            for key, value in record.__dict__.items()
            if key not in _STANDARD
        ]
        whole = [message, record.exc_text or "", record.stack_info or ""]
        if not self._scan.maybe("\n".join([*whole, *(text for _, text in extra)])):
            record.msg = message
            return True
        record.msg = self.redact(message)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for key, text in extra:
            redacted = self.redact(text)
            if redacted != text:
                setattr(record, key, redacted)
        return True


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a caller gave with `extra=`."""
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


def traceback_text(record: logging.LogRecord, formatter: logging.Formatter) -> str:
    """The record's traceback and stack, as Python prints them; empty when it has none."""
    if record.exc_info and not record.exc_text:
        record.exc_text = formatter.formatException(record.exc_info)
    parts = [record.exc_text or "", record.stack_info or ""]
    return "\n".join(p.rstrip("\n") for p in parts if p)


class KeyValueFormatter(logging.Formatter):
    """`time LEVEL logger: message key=value ...` on one line, the fields in the caller's
    order (newlines in the message and fields escaped); a traceback follows on lines of its
    own, each indented."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        message = record.message.replace("\r", "\\r").replace("\n", "\\n")
        line = (
            f"{self.formatTime(record, '%Y-%m-%dT%H:%M:%S')} {record.levelname} {record.name}: "
            + message
        )
        extra = fields(record)
        # The door process sends its records' tracebacks as a field: shown as ours are.
        sent = extra.pop("traceback") if isinstance(extra.get("traceback"), str) else ""
        if extra:
            line += " " + " ".join(f"{k}={v!r}" for k, v in extra.items())
        trace = "\n".join(t for t in (traceback_text(record, self), sent) if t)
        if trace:
            line += "\n" + textwrap.indent(trace, TRACE_INDENT, lambda _: True)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message, every structured field,
    and `traceback` as one string, for log collectors."""

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.message,
        }
        for key, value in fields(record).items():
            entry.setdefault(key, value)
        trace = traceback_text(record, self)
        if trace:
            entry["traceback"] = trace
        return json.dumps(entry, ensure_ascii=False, default=str)


FORMATTERS: dict[str, type[logging.Formatter]] = {"text": KeyValueFormatter, "json": JsonFormatter}


class PrivateRotatingFileHandler(RotatingFileHandler):
    """Each log file (the first, and each one a rotation starts) made 0600 before it is
    opened: what operators said is in it."""

    def _open(self) -> Any:
        create_private(Path(self.baseFilename))
        return super()._open()


def configure(
    settings: LoggingConfig,
    *,
    secrets: Secrets | Iterable[str],
    to_stderr: bool,
    default_file: Path,
) -> Path | None:
    """Log to stderr, and to `settings.file` if set (rotated). When the terminal belongs to a
    console chat (`to_stderr` False), only to a file: `settings.file`, else `default_file`.
    Returns the file written to, if any."""
    handlers: list[logging.Handler] = []
    if to_stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    file = Path(settings.file) if settings.file else (None if to_stderr else default_file)
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(
            PrivateRotatingFileHandler(
                file, maxBytes=settings.max_bytes, backupCount=settings.backups, encoding="utf-8"
            )
        )
    redactor = Redactor(secrets)
    formatter = FORMATTERS[settings.format]()
    for handler in handlers:
        handler.addFilter(redactor)
        handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = handlers
    level = getattr(logging, settings.level.upper())
    root.setLevel(level)
    for name in _CHATTY:
        logging.getLogger(name).setLevel(level if level == logging.DEBUG else logging.WARNING)
    logging.captureWarnings(True)
    # No line shows where it was logged from, nor the thread or process: not looked up for
    # each record (logging's own switches for that, `Optimization` in its HOWTO).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    return file
