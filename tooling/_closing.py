"""``Closing``: sync and async context managers for anything with ``close``/``aclose``."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__: list[str] = []


class Closing:
    """Mixin: ``with obj:`` calls ``close()``, ``async with obj:`` awaits ``aclose()``.

    A subclass defines both: ``close`` blocks until closed, ``aclose`` does the same
    without blocking the event loop. The web server, the runner and the stores use it.
    """

    def close(self) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
