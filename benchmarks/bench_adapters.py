"""What an adapter adds to one call, each direction, against calling the framework's tool
directly. Runs where the frameworks are installed (the adapters' environment):

    venv-adapters/bin/python benchmarks/bench_adapters.py           # about a minute
    venv-adapters/bin/python benchmarks/bench_adapters.py --quick   # ~15 s, rougher
    venv-adapters/bin/python benchmarks/bench_adapters.py --clock cpu

In: our ``run()`` of ``LangchainTool`` against LangChain's own ``ainvoke(ToolCall)``, and
of ``CrewaiTool`` against CrewAI's ``run`` on the same worker pool (a sync tool must be
called off the event loop either way). Out: each framework's call path over our exported
tool against the same path over the framework's own tool of the same function (LangChain
``ainvoke``; openai-agents ``on_invoke_tool``; pydantic-ai's validator then
``function_schema.call``, what its agent graph does per call; google-adk ``run_async``).
The tools are async functions adding two numbers (CrewAI's is sync), so the numbers are
the adapters' and frameworks' own costs. Target: ours ≤ 1.2 × base + 20 µs. Numbers are
medians of interleaved rounds; this is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
warnings.filterwarnings("ignore")

from _timing import Case, fmt_ns, fmt_ratio, load_avg, measure, ratio, set_clock, table  # noqa: E402

from tooling import SimpleToolContext, tool  # noqa: E402
from tooling._function.calling import in_thread  # noqa: E402
from tooling._workers.threads import default_executor  # noqa: E402


async def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


ARGS = {"a": 2, "b": 3}
TOOL_CALL = {"name": "add", "args": ARGS, "id": "call_1", "type": "tool_call"}


def in_cases() -> dict[str, tuple[Case, Case]]:
    from crewai.tools import BaseTool as CrewBaseTool
    from langchain_core.tools import StructuredTool
    from pydantic import BaseModel

    from tooling.adapters import CrewaiTool, LangchainTool

    native = StructuredTool.from_function(coroutine=add, name="add", description="Add.")
    adapted = LangchainTool(native)

    class AddArgs(BaseModel):
        a: int
        b: int = 1

    class CrewAdd(CrewBaseTool):
        name: str = "add"
        description: str = "Add two numbers."
        args_schema: type[BaseModel] = AddArgs

        def _run(self, a: int, b: int = 1) -> int:
            return a + b

    crew = CrewAdd()
    crew_adapted = CrewaiTool(crew)
    pool = default_executor()

    def crew_run() -> Any:
        return crew.run(**ARGS)

    return {
        "LangChain tool -> ours (LangchainTool.run)": (
            Case("await native.ainvoke(call)", {"native": native, "call": TOOL_CALL}),
            Case("await adapted.run(args)", {"adapted": adapted, "args": ARGS}),
        ),
        "CrewAI tool -> ours (CrewaiTool.run)": (
            Case(
                "await in_thread(crew_run, [], {}, pool)",
                {"in_thread": in_thread, "crew_run": crew_run, "pool": pool},
                wall=True,
            ),
            Case("await adapted.run(args)", {"adapted": crew_adapted, "args": ARGS}, wall=True),
        ),
    }


def out_cases() -> dict[str, tuple[Case, Case]]:
    from agents import function_tool
    from agents.tool_context import ToolContext as AgentsToolContext
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools import FunctionTool as AdkFunctionTool
    from google.adk.tools.tool_context import ToolContext as AdkToolContext
    from langchain_core.tools import StructuredTool
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from tooling.adapters import to_adk, to_langchain, to_openai_agents, to_pydantic_ai

    ours = tool(add)
    cases: dict[str, tuple[Case, Case]] = {}

    lc_native = StructuredTool.from_function(coroutine=add, name="add", description="Add.")
    cases["ours -> LangChain (ainvoke)"] = (
        Case("await t.ainvoke(call)", {"t": lc_native, "call": TOOL_CALL}),
        Case("await t.ainvoke(call)", {"t": to_langchain(ours), "call": TOOL_CALL}),
    )

    agents_ctx = AgentsToolContext(
        context=None, tool_name="add", tool_call_id="call_1", tool_arguments=json.dumps(ARGS)
    )
    text = json.dumps(ARGS)
    cases["ours -> openai-agents (on_invoke_tool)"] = (
        Case(
            "await t.on_invoke_tool(ctx, text)",
            {"t": function_tool(add), "ctx": agents_ctx, "text": text},
        ),
        Case(
            "await t.on_invoke_tool(ctx, text)",
            {"t": to_openai_agents(ours), "ctx": agents_ctx, "text": text},
        ),
    )

    run_ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="call_1")
    native_schema = Tool(add).function_schema
    ours_schema = to_pydantic_ai(ours).function_schema
    stmt = "await s.call(s.validator.validate_python(args), ctx)"
    cases["ours -> pydantic-ai (validate + call)"] = (
        Case(stmt, {"s": native_schema, "args": ARGS, "ctx": run_ctx}),
        Case(stmt, {"s": ours_schema, "args": ARGS, "ctx": run_ctx}),
    )

    async def adk_context() -> Any:
        service = InMemorySessionService()
        session = await service.create_session(app_name="b", user_id="u")
        agent = LlmAgent(name="bench", model="gemini-2.0-flash")
        invocation = InvocationContext(
            session_service=service, invocation_id="i", agent=agent, session=session
        )
        return AdkToolContext(invocation, function_call_id="call_1")

    from _timing import loop

    adk_ctx = loop().run_until_complete(adk_context())
    stmt = "await t.run_async(args=args, tool_context=ctx)"
    cases["ours -> google-adk (run_async)"] = (
        Case(stmt, {"t": AdkFunctionTool(add), "args": ARGS, "ctx": adk_ctx}),
        Case(stmt, {"t": to_adk(ours), "args": ARGS, "ctx": adk_ctx}),
    )
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run with rougher numbers")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    options = parser.parse_args()
    set_clock(options.clock)
    rounds, budget = (5, 40.0) if options.quick else (15, 80.0)

    # A call's context: the same one for every case that needs one.
    SimpleToolContext()
    rows = []
    failed = 0
    for direction, build in (("in", in_cases), ("out", out_cases)):
        for name, (base, ours) in build().items():
            timed = measure({"base": base, "ours": ours}, rounds=rounds, budget_ms=budget)
            b, o = timed["base"], timed["ours"]
            limit = 1.2 * b + 20_000
            ok = o <= limit
            failed += not ok
            rows.append(
                [
                    f"{direction}: {name}",
                    fmt_ns(b),
                    fmt_ns(o),
                    ("-" if o < b else "+") + fmt_ns(abs(o - b)),
                    fmt_ratio(ratio(o, b)),
                    fmt_ns(limit),
                    "yes" if ok else "NO",
                ]
            )
    notes = [
        f"Python {platform.python_version()}, {options.clock} clock, {rounds} rounds; {load_avg()}",
        "target: ours ≤ 1.2 × base + 20 µs per call",
    ]
    print(
        table(
            "What an adapter adds to one call",
            ["case", "framework's own", "through ours", "added", "ratio", "limit", "ok?"],
            rows,
            notes,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
