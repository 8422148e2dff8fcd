"""The bridge's tables: migrations, typed reads, and writes inside runtime transactions."""
