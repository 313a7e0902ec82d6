"""What every command-line entry point shares: the parser and the run wrapper that turns
errors into one line and an exit status."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import NoReturn

from .discovery import (
    EXIT_INTERRUPTED,
    EXIT_TOOL_ERROR,
    CliError,
    describe_exception,
    one_line,
)

__all__: list[str] = []


class CliParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see {self.prog} --help)")


def run_cli(
    prog: str,
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
) -> int:
    """Parse ``argv`` and run the chosen handler; errors become one line on stderr.

    Shared by the ``tooling`` and ``agent-core`` commands.
    """
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw
    _report_tool_failures(prog, debug)
    try:
        args = parser.parse_args(raw)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except CliError as exc:
        if debug:
            raise
        sys.stderr.write(f"{prog}: {exc.message}\n")
        return exc.status
    except KeyboardInterrupt:
        if debug:
            raise
        sys.stderr.write(f"\n{prog}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_TOOL_ERROR
    except Exception as exc:
        if debug:
            raise
        sys.stderr.write(
            f"{prog}: {describe_exception(exc)} (run with --debug for the traceback)\n"
        )
        return EXIT_TOOL_ERROR


class _OneLine(logging.Handler):
    """Warnings of the library loggers as one line each, pointing at ``--debug``."""

    def __init__(self, prog: str) -> None:
        super().__init__(logging.WARNING)
        self.prog = prog

    def emit(self, record: logging.LogRecord) -> None:
        hint = " (run with --debug for the traceback)" if record.exc_info else ""
        sys.stderr.write(f"{self.prog}: {one_line(record.getMessage())}{hint}\n")


def _report_tool_failures(prog: str, debug: bool) -> None:
    """Show tool failures (logged by ``tooling`` and ``agent_core``) on stderr: with their
    tracebacks under ``--debug``, else one line each."""
    if debug:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    else:
        handler = _OneLine(prog)
    handler.setLevel(logging.WARNING)
    for name in ("tooling", "agent_core"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.StreamHandler | _OneLine) for h in logger.handlers):
            logger.addHandler(handler)
