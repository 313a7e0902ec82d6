"""``LocalCodeExecution``: a ``run_python`` tool that runs code in a fresh, bounded process.

Each call starts a new interpreter (``python -I``: no user site, no ``PYTHON*``
variables) in a session of its own, with:

- an empty temporary working directory (removed afterwards) as ``HOME`` and ``TMPDIR``;
- an environment holding only ``PATH``, ``HOME``, ``TMPDIR`` and ``LANG``;
- resource limits set in the child before the code runs: CPU seconds, address space
  (``memory_mb``), the size of any file it writes, open files and processes;
- stdout and stderr read as they come and cut at ``max_output_bytes`` each: past that
  the process group is killed (a program printing a gigabyte is stopped, not drained);
- past ``timeout`` seconds (or when the call is cancelled) the whole process group is
  killed, children it forked included.

This bounds resources; it is not a security boundary. The code runs as the host's user
with its file-system view (it can read what that user can read and open network
connections). Run untrusted code inside a container or a VM on top of this.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from typing import Any

from .._errors import ToolError
from .._function.tool import FunctionTool

__all__ = ["LocalCodeExecution"]

# The child's first statements: limits first, then the user's code as __main__. The code
# arrives on stdin (never on the command line, where `ps` would show it).
_BOOT = """\
import resource, sys
def _limit(which, value):
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass
_cpu, _mem, _fsize, _nofile, _nproc = (int(a) for a in sys.argv[1:6])
_limit(resource.RLIMIT_CPU, _cpu)
_limit(resource.RLIMIT_AS, _mem)
_limit(resource.RLIMIT_FSIZE, _fsize)
_limit(resource.RLIMIT_NOFILE, _nofile)
_limit(resource.RLIMIT_NPROC, _nproc)
del _limit, _cpu, _mem, _fsize, _nofile, _nproc, resource
_source = sys.stdin.read()
sys.stdin.close()
sys.argv = ["<code>"]
_globals = {"__name__": "__main__", "__builtins__": __builtins__}
try:
    exec(compile(_source, "<code>", "exec"), _globals)
except SystemExit:
    raise
except BaseException as _exc:
    import traceback
    traceback.print_exception(type(_exc), _exc, _exc.__traceback__.tb_next)
    sys.exit(1)
"""

_CHUNK = 65536


class LocalCodeExecution:
    """Runs Python code in a fresh, resource-bounded process on this machine.

    ``tool`` is the ``run_python(code)`` tool (also the natural ``fallback=`` for
    :class:`CodeExecution`). It answers ``{"stdout", "stderr", "exit_code"}``, plus
    ``"timed_out": true`` when the code ran past ``timeout`` and ``"truncated": true`` when
    output was cut. Limits: ``timeout`` seconds of wall time (CPU time is capped at the
    same), ``memory_mb`` of address space, ``max_output_bytes`` of stdout and of stderr,
    ``max_file_bytes`` per file written, ``max_open_files`` descriptors and
    ``max_processes`` processes for the user (not enforced for root).

    It bounds resources; it is **not a security boundary**: the code can read what this
    process's user can read and reach the network.
    """

    def __init__(
        self,
        timeout: float = 10.0,
        memory_mb: int = 512,
        max_output_bytes: int = 65536,
        *,
        max_file_bytes: int = 16 * 1024 * 1024,
        max_open_files: int = 64,
        max_processes: int = 64,
        python: str | None = None,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if memory_mb < 32:
            raise ValueError("memory_mb must be at least 32 (an interpreter needs it)")
        if max_output_bytes < 1:
            raise ValueError("max_output_bytes must be at least 1")
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.max_output_bytes = max_output_bytes
        self.max_file_bytes = max_file_bytes
        self.max_open_files = max_open_files
        self.max_processes = max_processes
        self.python = python or sys.executable
        self.tool: FunctionTool[..., Any] = self._make_tool()

    def _make_tool(self) -> FunctionTool[..., Any]:
        from .. import tool

        runner = self

        @tool(name="run_python")
        async def run_python(code: str) -> dict[str, Any]:
            """Run a Python 3 program and return what it printed.

            The program starts in an empty directory with no third-party state; print
            what you want to see. Output past the limit is cut.

            Args:
                code: The whole program, as a Python source text.
            """
            return await runner.run(code)

        return run_python

    async def run(self, code: str) -> dict[str, Any]:
        """Run ``code``; the response ``run_python`` gives."""
        workdir = tempfile.mkdtemp(prefix="tooling-code-")
        try:
            return await self._run_in(code, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    async def _run_in(self, code: str, workdir: str) -> dict[str, Any]:
        cpu = max(1, int(self.timeout) + 1)
        argv = [
            self.python,
            "-I",
            "-c",
            _BOOT,
            str(cpu),
            str(self.memory_mb * 1024 * 1024),
            str(self.max_file_bytes),
            str(self.max_open_files),
            str(self.max_processes),
        ]
        env = {
            "PATH": os.defpath,
            "HOME": workdir,
            "TMPDIR": workdir,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=workdir,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"the code could not be started: {exc}") from None
        state = _Outputs(self.max_output_bytes)
        readers = [
            asyncio.ensure_future(state.read(process.stdout, "stdout", process.pid)),
            asyncio.ensure_future(state.read(process.stderr, "stderr", process.pid)),
        ]
        try:
            assert process.stdin is not None
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(code.encode("utf-8", "surrogatepass"))
                await process.stdin.drain()
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), timeout=self.timeout)
            except TimeoutError:
                state.timed_out = True
        finally:
            # Whatever the outcome (cancelled included): the code's whole session goes,
            # children it forked too; then what they wrote before is read to the end.
            _kill_group(process.pid)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), timeout=5.0)
            _, pending = await asyncio.wait(readers, timeout=1.0)
            for reader in pending:
                reader.cancel()
        response: dict[str, Any] = {
            "stdout": state.text("stdout"),
            "stderr": state.text("stderr"),
            "exit_code": process.returncode,
        }
        if state.timed_out:
            response["timed_out"] = True
            response["stderr"] += f"\n[stopped: the code ran past {self.timeout:g} s]"
        if state.truncated:
            response["truncated"] = True
        return response


class _Outputs:
    """stdout and stderr as read so far, each cut at the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = False
        self.timed_out = False

    async def read(self, stream: asyncio.StreamReader | None, which: str, pid: int) -> None:
        if stream is None:
            return
        buffer = self.data[which]
        while chunk := await stream.read(_CHUNK):
            room = self.limit - len(buffer)
            buffer += chunk[: max(room, 0)]
            if len(chunk) > room:
                self.truncated = True
                _kill_group(pid)  # more output would only be thrown away
                return

    def text(self, which: str) -> str:
        text = self.data[which].decode("utf-8", "replace")
        if self.truncated and len(self.data[which]) >= self.limit:
            text += f"\n[output cut at {self.limit} bytes]"
        return text


def _kill_group(pid: int) -> None:
    """SIGKILL the code's session (its process group): forked children go too."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
