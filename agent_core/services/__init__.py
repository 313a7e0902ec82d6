"""Artifact and memory services."""
