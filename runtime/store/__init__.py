"""Durable storage behind one narrow interface."""

from runtime.store.sqlite import Store, Writer

__all__ = ["Store", "Writer"]
