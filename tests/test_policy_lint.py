"""``tooling inspect --lint``: names a provider would rename, tools hidden by scopes,
guardrails and budgets, as a real subprocess prints them."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from tests._mcp_helpers import ROOT, TOOLING

TARGET = """
from tooling import BaseTool, Reject, tool


class Remote(BaseTool):
    description = "A tool with an MCP name."
    name = "crm.accounts/lookup"

    async def run(self, args, ctx=None):
        return {}


remote = Remote()


@tool(scopes=["admin"], retries=2, retry_on=ConnectionError, max_calls_per_run=3)
def purge(days: int) -> int:
    \"\"\"Purge old rows.\"\"\"
    return days


@tool(guardrails=[lambda args, ctx: None], max_result_tokens=500)
def fetch(url: str) -> str:
    \"\"\"Fetch a page.\"\"\"
    return url


@tool
def plain() -> str:
    \"\"\"Nothing to say about this one.\"\"\"
    return ""
"""


def lint(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    target = tmp_path / "policy_target.py"
    target.write_text(textwrap.dedent(TARGET))
    return subprocess.run(
        [*TOOLING, "inspect", str(target), "--lint", *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_lint_reports_what_the_policies_make_visible(tmp_path: Path) -> None:
    done = lint(tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)
    by = {(f["tool"], f["code"]) for f in findings}
    assert ("crm.accounts/lookup", "name.renamed") in by
    assert ("purge", "scopes.hidden") in by
    assert ("purge", "budget") in by
    assert ("purge", "retries.not_idempotent") in by
    assert ("fetch", "guardrails") in by and ("fetch", "budget") in by
    assert not any(f["tool"] == "plain" for f in findings)
    renamed = [f["message"] for f in findings if f["code"] == "name.renamed"]
    assert any(m.startswith("openai is given the name 'crm_accounts_lookup_") for m in renamed)


def test_lint_prints_one_line_per_finding(tmp_path: Path) -> None:
    done = lint(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "purge: scopes.hidden: offered and run only when the run grants admin" in done.stdout
