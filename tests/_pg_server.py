"""A throwaway PostgreSQL server for tests and benchmarks (what ``.ci/run`` starts too).

``PgServer.start()`` makes a fresh cluster in a temporary directory (trust
authentication, a Unix socket in that directory, no TCP, ``fsync`` off: nothing in it is
worth keeping) with the PostgreSQL binaries found on the machine (``pg_config
--bindir``, else ``/usr/lib/postgresql/<version>/bin``). The server refuses to run as
root: as root, it runs as the ``postgres`` user. ``stop()`` stops it and removes the
directory; ``restart()`` restarts it in place (for fault tests).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["PgServer", "find_bindir"]

_PORT = 5432  # only names the socket file: the server listens on no TCP port


def find_bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are, or None."""
    candidates: list[str] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if found.returncode == 0:
            candidates.append(found.stdout.strip())
    candidates.extend(sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True))
    for candidate in candidates:
        path = Path(candidate)
        if (path / "initdb").is_file() and (path / "pg_ctl").is_file():
            return path
    return None


class PgServer:
    """One running throwaway cluster; ``dsn`` reaches its ``postgres`` database."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.socket_dir = root
        self.dsn = f"postgresql://postgres@/postgres?host={root}&port={_PORT}"

    @classmethod
    def start(cls, bindir: Path | None = None) -> PgServer:
        bindir = bindir or find_bindir()
        if bindir is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
        root = Path(tempfile.mkdtemp(prefix="agent-core-pg-"))
        server = cls(bindir, root)
        try:
            if os.geteuid() == 0:
                shutil.chown(root, "postgres", "postgres")
            server._as_owner(
                "initdb", "-D", str(server.data), "-U", "postgres", "-A", "trust", "--no-sync"
            )
            server._ctl("start")
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return server

    def _as_owner(self, program: str, *args: str) -> None:
        command = [str(self.bindir / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.root)
        if done.returncode != 0:
            raise RuntimeError(f"{program} failed: {done.stdout}{done.stderr}")

    def _ctl(self, action: str, *extra: str) -> None:
        options = (
            f"-k {self.socket_dir} -p {_PORT} -c listen_addresses='' -c fsync=off"
            " -c max_connections=200"
        )
        self._as_owner(
            "pg_ctl",
            action,
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            *extra,
        )

    def restart(self) -> None:
        """Stop the server (ending every connection) and start it again."""
        self._ctl("restart", "-m", "fast")

    def stop(self) -> None:
        try:
            self._as_owner("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


if __name__ == "__main__":  # start one for a shell: prints its DSN, stops on Enter
    server = PgServer.start()
    print(server.dsn, flush=True)
    try:
        input()
    finally:
        server.stop()
