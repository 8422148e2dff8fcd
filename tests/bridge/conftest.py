"""Every test here runs on SQLite and on PostgreSQL (tests/backends.py)."""

from tests.backends import db_path
from tests.postgres import pg_url

__all__ = ["db_path", "pg_url"]
