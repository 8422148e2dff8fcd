"""A reload's verdict in the log: what was applied, what needs a restart, why it was refused.
Never a value from the file: the errors name keys and problems, and secrets are redacted by
the log's own filter besides."""

from __future__ import annotations

from typing import Any

from config.diff import ReloadReport


def report_fields(report: ReloadReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "changed": list(report.changed),
        "added": list(report.added),
        "removed": list(report.removed),
        "restart_needed": list(report.restart_needed),
        "errors": report.errors,
    }
