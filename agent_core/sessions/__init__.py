"""Session services: in memory and SQLite."""
