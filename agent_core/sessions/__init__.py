"""Session services: in memory, SQLite and PostgreSQL; the state rules and the leases."""
