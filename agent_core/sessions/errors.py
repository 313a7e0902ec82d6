"""What a session store raises."""

from __future__ import annotations

__all__ = ["AlreadyExistsError", "SessionBusyError", "SessionExistsError", "SessionStoreError"]


class SessionExistsError(ValueError):
    """``create_session`` was given an id the user already has in the app."""


#: google-adk's name of :class:`SessionExistsError` (the same class).
AlreadyExistsError = SessionExistsError


class SessionBusyError(TimeoutError):
    """The session's lease (one writer per session) was not had within the timeout."""


class SessionStoreError(ConnectionError):
    """The store could not be reached, or the connection broke during an operation.

    Nothing of the failed operation is stored. ``code`` is the error code a run that
    meets it ends with.
    """

    code = "session.unavailable"
