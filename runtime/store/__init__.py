"""Durable storage behind one narrow interface."""

from runtime.store.sqlite import Store
from runtime.store.writer import Writer

__all__ = ["Store", "Writer"]
