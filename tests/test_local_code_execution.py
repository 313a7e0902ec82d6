"""LocalCodeExecution: run_python in a fresh process, bounded in time, memory, files and output."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tooling import Scheduler, ToolCall, ToolError
from tooling.builtin import CodeExecution, LocalCodeExecution


def _gone(pid: int) -> bool:
    """True when ``pid`` is no process, or only a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def test_print_gives_stdout_and_exit_code() -> None:
    result = await LocalCodeExecution().tool.run({"code": "print(1 + 1)"})
    assert result == {"stdout": "2\n", "stderr": "", "exit_code": 0}


async def test_the_code_starts_in_an_empty_directory_with_a_scrubbed_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SECRET_API_KEY", "sk-do-not-leak")
    code = "import os, json; print(json.dumps([os.listdir('.'), sorted(os.environ), os.getcwd()]))"
    result = await LocalCodeExecution().tool.run({"code": code})
    import json

    listing, names, cwd = json.loads(result["stdout"])
    assert listing == []
    assert "SECRET_API_KEY" not in names
    assert set(names) <= {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONDONTWRITEBYTECODE", "LC_CTYPE"}
    assert not Path(cwd).exists(), "the working directory is removed after the call"


async def test_an_exception_is_its_traceback_on_stderr_and_exit_code_1() -> None:
    result = await LocalCodeExecution().tool.run({"code": "raise ValueError('boom')"})
    assert result["exit_code"] == 1
    assert result["stderr"].startswith("Traceback")
    assert "ValueError: boom" in result["stderr"]
    assert "<string>" not in result["stderr"], "the boot frame is not shown"


async def test_sys_exit_is_the_exit_code() -> None:
    result = await LocalCodeExecution().tool.run({"code": "import sys; sys.exit(7)"})
    assert result["exit_code"] == 7


async def test_a_loop_is_stopped_at_the_timeout() -> None:
    started = time.monotonic()
    result = await LocalCodeExecution(timeout=0.5).tool.run({"code": "while True: pass"})
    assert result["timed_out"] is True
    assert result["exit_code"] != 0
    assert "ran past 0.5 s" in result["stderr"]
    assert time.monotonic() - started < 10


async def test_memory_past_the_limit_is_a_memory_error() -> None:
    code = "x = bytearray(600 * 1024 * 1024)\nprint('allocated')"
    result = await LocalCodeExecution(memory_mb=256).tool.run({"code": code})
    assert "allocated" not in result["stdout"]
    assert "MemoryError" in result["stderr"]
    assert result["exit_code"] == 1


async def test_a_file_past_the_size_limit_cannot_be_written() -> None:
    code = (
        "try:\n"
        "    open('big', 'wb').write(b'x' * (4 * 1024 * 1024))\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    result = await LocalCodeExecution(max_file_bytes=1024 * 1024).tool.run({"code": code})
    assert result["stdout"].startswith("refused 27"), result  # EFBIG


async def test_open_files_are_bounded() -> None:
    code = (
        "import os\nfds = []\n"
        "try:\n"
        "    while True: fds.append(os.open('.', os.O_RDONLY))\n"
        "except OSError as exc:\n"
        "    print('stopped', exc.errno, len(fds) < 40)\n"
    )
    result = await LocalCodeExecution(max_open_files=32).tool.run({"code": code})
    assert result["stdout"].startswith("stopped 24 True"), result  # EMFILE


async def test_a_flood_of_output_is_cut_and_the_process_stopped() -> None:
    code = "while True:\n    print('x' * 65536)"
    started = time.monotonic()
    result = await LocalCodeExecution(timeout=30, max_output_bytes=10_000).tool.run({"code": code})
    assert result["truncated"] is True
    assert result["stdout"].startswith("x" * 10_000)
    assert "[output cut at 10000 bytes]" in result["stdout"]
    assert len(result["stdout"]) < 10_100
    assert "timed_out" not in result, "stopped at the cap, long before the timeout"
    assert time.monotonic() - started < 20


async def test_forked_children_are_gone_when_the_call_answers() -> None:
    code = (
        "import os, sys, time\n"
        "pids = []\n"
        "for _ in range(5):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    pids.append(pid)\n"
        "print(os.getpgid(0), *pids, flush=True)\n"
    )
    result = await LocalCodeExecution(timeout=5).tool.run({"code": code})
    group, *children = (int(x) for x in result["stdout"].split())
    assert len(children) == 5
    for _ in range(50):
        if all(_gone(pid) for pid in children):
            break
        await asyncio.sleep(0.05)
    assert all(_gone(pid) for pid in children), "a forked child outlived the call"
    assert group not in children


async def test_cancelling_the_call_stops_the_code() -> None:
    code = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)"
    scheduler = Scheduler([LocalCodeExecution(timeout=60).tool])
    task = asyncio.ensure_future(
        scheduler.dispatch([ToolCall(id="c1", name="run_python", args={"code": code})])
    )
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The code's session is killed when the call is cancelled: nothing of it is left.
    for _ in range(50):
        procs = [p for p in Path("/proc").iterdir() if p.name.isdigit()]
        if not any(_runs_sleep_60(p) for p in procs):
            break
        await asyncio.sleep(0.05)
    assert not any(_runs_sleep_60(p) for p in Path("/proc").iterdir() if p.name.isdigit())


def _runs_sleep_60(proc: Path) -> bool:
    try:
        return b"tooling-code-" in (proc / "environ").read_bytes() and not _gone(int(proc.name))
    except OSError:
        return False


async def test_the_scheduler_runs_it_like_any_tool_and_it_is_code_executions_fallback() -> None:
    local = LocalCodeExecution()
    builtin = CodeExecution(fallback=local.tool)
    assert builtin.fallback is local.tool
    [response] = await Scheduler([local.tool]).dispatch(
        [ToolCall(id="c1", name="run_python", args={"code": "print('hi')"})]
    )
    assert response.response["stdout"] == "hi\n"
    assert local.tool.to_openai()["function"]["parameters"]["required"] == ["code"]


async def test_bad_arguments_are_a_clear_error() -> None:
    with pytest.raises(ToolError) as raised:
        await LocalCodeExecution().tool.run({"source": "print(1)"})
    assert raised.value.code == "tool.invalid_arguments"
    assert "valid arguments: code" in raised.value.message


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="timeout"):
        LocalCodeExecution(timeout=0)
    with pytest.raises(ValueError, match="memory_mb"):
        LocalCodeExecution(memory_mb=1)
