"""Durable storage behind one narrow interface."""

from runtime.store.store import Store
from runtime.store.writer import Writer

__all__ = ["Store", "Writer"]
