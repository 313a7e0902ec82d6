"""What tool policies cost, as ratios to baselines measured in the same run.

    .venv/bin/python benchmarks/bench_policies.py            # about 30 s
    .venv/bin/python benchmarks/bench_policies.py --quick    # ~10 s, rougher numbers

Sections: 1 a provider's name mapped back: ``dispatch()`` of one call by a name OpenAI
was given (a 90-character MCP name) against the same call by the tool's own name, and
the loop's map back of a model's call; 2 ``ToolSearch`` over 1,000 tools: the bytes of
the tools declared in the first request (OpenAI strict declarations, JSON) against
declaring every tool; 3 a policy-free call against one passing a run budget and a
guardrail (what the policies cost when used; a call without them takes the short way
the scheduler benchmark measures). Numbers are medians of interleaved rounds; ``ok?``
compares with the targets (name mapping ≤ 1 µs a call; the first request ≤ 10 % of the
eager bytes). This is a script, not a test.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from _timing import Case, fmt_ns, fmt_ratio, loop, measure, set_clock, table, verdict

from agent_core import Agent, FunctionCall, Runner, ScriptedModel, ToolSearch
from agent_core._invocation.tool_calls import refusal
from tooling import BaseTool, FunctionTool, Reject, Scheduler, ToolCall, ToolContext, tool
from tooling.integration import RunBudget, provider_aliases, provider_name


class Echo(BaseTool):
    description = "Echo."

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, args: Any, ctx: ToolContext | None = None) -> dict[str, Any]:
        return {"ok": True}


def bench_names(rounds: int, budget_ms: float) -> str:
    long_name = "crm.accounts/" + "customer_records_" * 4 + "lookup"
    remote = Echo(long_name)
    wire = provider_name(long_name, "openai")
    scheduler = Scheduler([remote, Echo("plain")])
    by_own = [ToolCall("c", long_name, {})]
    by_wire = [ToolCall("c", wire, {})]
    loop().run_until_complete(scheduler.dispatch(by_wire))
    tools = {long_name: remote, **{f"t{i}": Echo(f"t{i}") for i in range(20)}}
    aliases = provider_aliases(tools)  # the loop's table, made once per run and agent

    results = measure(
        {
            "own": Case("await s.dispatch(calls)", {"s": scheduler, "calls": by_own}),
            "wire": Case("await s.dispatch(calls)", {"s": scheduler, "calls": by_wire}),
            "loop_own": Case(
                "refusal(FunctionCall(id='c', name=n, args={}), tools, aliases)",
                {
                    "refusal": refusal,
                    "FunctionCall": FunctionCall,
                    "n": long_name,
                    "tools": tools,
                    "aliases": aliases,
                },
            ),
            "loop_wire": Case(
                "refusal(FunctionCall(id='c', name=n, args={}), tools, aliases)",
                {
                    "refusal": refusal,
                    "FunctionCall": FunctionCall,
                    "n": wire,
                    "tools": tools,
                    "aliases": aliases,
                },
            ),
            "export": Case(
                "provider_name(n, 'openai')", {"provider_name": provider_name, "n": long_name}
            ),
        },
        rounds=rounds,
        budget_ms=budget_ms,
    )
    extra = results["wire"] - results["own"]
    loop_extra = results["loop_wire"] - results["loop_own"]
    rows = [
        ["dispatch() by the tool's own name", fmt_ns(results["own"]), "", ""],
        ["dispatch() by OpenAI's name for it", fmt_ns(results["wire"]), fmt_ns(extra), verdict(extra <= 1000)],  # noqa: E501
        ["loop: a model's call, own name", fmt_ns(results["loop_own"]), "", ""],
        ["loop: a model's call mapped back (21 tools)", fmt_ns(results["loop_wire"]), fmt_ns(loop_extra), verdict(loop_extra <= 1000)],  # noqa: E501
        ["an exporter's name (cached)", fmt_ns(results["export"]), "", ""],
    ]  # fmt: skip
    return table(
        "1. a provider's name mapped back (target: <= 1 us a call)",
        ["case", "per call", "added", "ok?"],
        rows,
        [f"tool name {len(long_name)} characters; OpenAI's name {wire!r}"],
    )


def catalog(n: int) -> list[FunctionTool[..., Any]]:
    made = []
    for i in range(n):

        def f(query: str, limit: int = 10, i: int = i) -> dict[str, Any]:
            return {"i": i}

        made.append(
            FunctionTool(
                f,
                name=f"service_{i:04d}_lookup",
                description=f"Look up records of service {i}: accounts, invoices, tickets "
                "and their history, filtered by a free-text query.",
            )
        )
    return made


def declared_bytes(tools: dict[str, BaseTool]) -> int:
    return len(json.dumps([t.to_openai(strict=True) for t in tools.values()]).encode())


def bench_search() -> str:
    tools = catalog(1000)
    eager_model = ScriptedModel(["ok"])
    lazy_model = ScriptedModel(["ok"])
    ev = loop()
    always = [t.name for t in tools[:3]]
    for model, search in ((eager_model, None), (lazy_model, ToolSearch(always, max_results=5))):
        runner = Runner(Agent("a", model, tools=tools, tool_search=search), app_name="b")

        async def once(runner: Runner = runner) -> None:
            async for _ in runner.run_async(user_id="u", session_id="s", new_message="hi"):
                pass

        ev.run_until_complete(once())
    eager = declared_bytes(eager_model.requests[0].tools)
    lazy = declared_bytes(lazy_model.requests[0].tools)
    share = lazy / eager
    rows = [
        ["every tool declared", f"{len(eager_model.requests[0].tools)}", f"{eager:,}", ""],
        ["ToolSearch(3 always, max_results=5)", f"{len(lazy_model.requests[0].tools)}", f"{lazy:,}", f"{share:.2%} {verdict(share <= 0.10)}"],  # noqa: E501
    ]  # fmt: skip
    return table(
        "2. the first request's declared tools, 1,000 tools (target: <= 10 % of eager)",
        ["case", "tools", "bytes (OpenAI strict JSON)", "share, ok?"],
        rows,
    )


def bench_policy_cost(rounds: int, budget_ms: float) -> str:
    @tool(read_only=True, concurrency_safe=True)
    async def plain(x: int) -> int:
        return x

    async def allow_async(args: dict[str, Any], ctx: ToolContext | None) -> Reject | None:
        return None

    guarded = FunctionTool(
        plain.__wrapped__, name="guarded", read_only=True, guardrails=[allow_async]
    )
    free = Scheduler([plain])
    budgeted = Scheduler([plain], budget=RunBudget(max_tool_calls=10**12))
    guarding = Scheduler([guarded])
    calls = [ToolCall("c", "plain", {"x": 1})]
    gcalls = [ToolCall("c", "guarded", {"x": 1})]
    results = measure(
        {
            "free": Case("await s.dispatch(c)", {"s": free, "c": calls}),
            "budget": Case("await s.dispatch(c)", {"s": budgeted, "c": calls}),
            "guard": Case("await s.dispatch(c)", {"s": guarding, "c": gcalls}),
        },
        rounds=rounds,
        budget_ms=budget_ms,
    )
    base = results["free"]
    rows = [
        ["policy-free call", fmt_ns(base), "1.00x"],
        ["with a run budget (the agent loop's)", fmt_ns(results["budget"]), fmt_ratio(results["budget"] / base)],  # noqa: E501
        ["with an async guardrail", fmt_ns(results["guard"]), fmt_ratio(results["guard"] / base)],
    ]  # fmt: skip
    return table(
        "3. what a policy costs when it is used (one async call per dispatch)",
        ["case", "per dispatch", "vs policy-free"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run, rougher numbers")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    args = parser.parse_args()
    set_clock(args.clock)
    rounds, budget = (5, 20.0) if args.quick else (11, 60.0)
    print(bench_names(rounds, budget))
    print(bench_search())
    print(bench_policy_cost(rounds, budget))


if __name__ == "__main__":
    main()
