"""Database plumbing shared by the stores: SQLite files and PostgreSQL pools."""
