"""Durable storage behind one narrow interface."""
