"""Tools an agent may call, and the envelope they return."""
