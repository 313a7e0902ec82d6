"""Every ```python block of README.md and docs/**/*.md runs as pasted.

How a page is run
    The blocks of one file run in order, in one namespace (a fresh module), with the
    repository root as the working directory. A file in which some block uses top-level
    ``await`` runs as in ``python -m asyncio``: every statement inside one running event
    loop. Any other file runs as a script, with no loop running.

Skipping a block
    A block preceded by the line ``<!-- not-run: reason -->`` (blank lines may stand
    between them) is not run: one that needs an API key, a browser, a long-lived server.

Shown outputs
    A comment starting with ``# -> `` after a top-level statement says what that
    statement gives; the lines right after it that start with ``#`` and two or more
    spaces continue it::

        add(1, 2)  # -> 3
        tool.parameters_json_schema
        # -> {'type': 'object',
        #     'properties': {...}}

    When the statement printed something, the printed text is compared; otherwise the
    value of the expression (its ``repr``). They match when the shown text is a Python
    literal equal to the value, or when the two texts are equal with runs of whitespace
    made one space, where ``...`` in the shown text stands for any text.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import re
import sys
import tokenize
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(?P<reason>.+?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced ```python block: its source and the file line its code starts on."""

    code: str
    line: int
    skip: str | None = None


@dataclass
class Expectation:
    """What a statement is shown to give, and where that is written."""

    text: str
    line: int


@dataclass
class Statement:
    node: ast.stmt
    expected: Expectation | None = None
    source: str = field(default="", repr=False)


def python_blocks(text: str) -> Iterator[Block]:
    """The ```python blocks of a Markdown text, with their not-run markers."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence = len(match["indent"]), match["fence"]
        info = match["info"].strip().split()
        start = i + 1
        end = start
        while end < len(lines) and not (
            lines[end].strip().startswith(fence) and lines[end].strip().strip(fence[0]) == ""
        ):
            end += 1
        if info and info[0] in ("python", "py"):
            body = "\n".join(line[indent:] for line in lines[start:end])
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            marker = _NOT_RUN.match(lines[k]) if k >= 0 else None
            yield Block(body, start + 1, marker["reason"] if marker else None)
        i = end + 1


def statements(block: Block, path: Path) -> list[Statement]:
    """The block's top-level statements, each with the output its comments show."""
    tree = ast.parse(block.code, filename=str(path))
    ast.increment_lineno(tree, block.line - 1)
    found = [Statement(node) for node in tree.body]
    arrows: list[Expectation] = []
    previous_line = -1
    tokens = tokenize.generate_tokens(io.StringIO(block.code).readline)
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0] + block.line - 1
        if token.string.startswith("# -> ") or token.string == "# ->":
            arrows.append(Expectation(token.string[5:], line))
        elif arrows and line == previous_line + 1 and re.match(r"#\s{2,}", token.string):
            arrows[-1].text += "\n" + token.string[1:]
        else:
            continue
        previous_line = line
    for arrow in arrows:
        owner = [s for s in found if s.node.lineno <= arrow.line]
        if not owner:
            raise AssertionError(f"{path}:{arrow.line}: '# ->' before any statement")
        if owner[-1].expected is not None:
            raise AssertionError(f"{path}:{arrow.line}: a second '# ->' for one statement")
        owner[-1].expected = arrow
    return found


def _normal(text: str) -> str:
    return " ".join(text.split())


def matches(shown: str, value: Any, printed: str) -> bool:
    """Whether ``shown`` says what the statement gave (see the module docstring)."""
    if printed:
        actual = printed
    else:
        try:
            if ast.literal_eval(shown.strip()) == value:
                return True
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        actual = repr(value)
    pattern = ".*?".join(re.escape(part) for part in _normal(shown).split("..."))
    return re.fullmatch(pattern, _normal(actual), flags=re.DOTALL) is not None


class PageRunner:
    """Runs the blocks of one page in one module namespace."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.shown_path = _id(path)
        name = "docs_" + re.sub(r"\W", "_", self.shown_path.removesuffix(".md"))
        self.module = types.ModuleType(name)
        self.module.__file__ = str(path)
        self.namespace = self.module.__dict__
        self.name = name

    def compile(self, statement: Statement, mode: str) -> types.CodeType:
        node: ast.mod
        if mode == "eval":
            assert isinstance(statement.node, ast.Expr)
            node = ast.Expression(statement.node.value)
        else:
            node = ast.Module([statement.node], type_ignores=[])
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        return compile(node, str(self.path), mode, flags=flags, dont_inherit=True)

    def code_of(self, statement: Statement) -> types.CodeType:
        if isinstance(statement.node, ast.Expr):
            return self.compile(statement, "eval")
        return self.compile(statement, "exec")

    def check(self, statement: Statement, value: Any, printed: str) -> None:
        sys.stdout.write(printed)
        expected = statement.expected
        if expected is None:
            return
        if not matches(expected.text, value, printed):
            shown = printed if printed else repr(value)
            raise AssertionError(
                f"{self.shown_path}:{expected.line}: the page shows\n"
                f"    {expected.text}\nbut the statement gave\n    {shown}"
            )

    def run(self, blocks: list[Block]) -> None:
        plan = [(b, statements(b, self.path)) for b in blocks if b.skip is None]
        codes = [[(s, self.code_of(s)) for s in stmts] for _, stmts in plan]
        is_async = any(code.co_flags & inspect.CO_COROUTINE for block in codes for _, code in block)
        sys.modules[self.name] = self.module
        try:
            if is_async:
                asyncio.run(self._run_async(codes))
            else:
                for block in codes:
                    for statement, code in block:
                        buffer = io.StringIO()
                        with contextlib.redirect_stdout(buffer):
                            value = eval(code, self.namespace)
                        self.check(statement, value, buffer.getvalue())
        finally:
            sys.modules.pop(self.name, None)

    async def _run_async(self, codes: list[list[tuple[Statement, types.CodeType]]]) -> None:
        for block in codes:
            for statement, code in block:
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer):
                    value = eval(code, self.namespace)
                    if code.co_flags & inspect.CO_COROUTINE:
                        value = await value
                self.check(statement, value, buffer.getvalue())


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _runnable(path: Path) -> bool:
    return any(b.skip is None for b in python_blocks(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", [p for p in PAGES if _runnable(p)], ids=_id)
def test_page_runs_as_pasted(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = list(python_blocks(path.read_text(encoding="utf-8")))
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    PageRunner(path).run(blocks)


# -- the runner itself ------------------------------------------------------------------------


def test_runner_reads_blocks_markers_and_outputs(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n"
        "```python\nx = 1 + 1\nx  # -> 2\nprint('a b')\n# -> a   b\n```\n\n"
        "<!-- not-run: needs a key -->\n\n```python\nraise SystemExit\n```\n\n"
        "```\nnot python\n```\n\n"
        "```python\nd = {'k': [1, 2]}\nd\n# -> {'k': [1,\n#           2]}\n"
        "object()  # -> <object ...>\n```\n",
        encoding="utf-8",
    )
    blocks = list(python_blocks(page.read_text()))
    assert [b.skip for b in blocks] == [None, "needs a key", None]
    assert blocks[0].line == 4
    PageRunner(page).run(blocks)

    with pytest.raises(AssertionError, match=r"page\.md:1: the page shows"):
        PageRunner(page).run([Block("1 + 1  # -> 3", 1)])


async def _coro() -> int:
    return 5


def test_runner_awaits_top_level_await() -> None:
    runner = PageRunner(ROOT / "page.md")
    runner.namespace["_coro"] = _coro
    runner.run([Block("import asyncio\nvalue = await _coro()\nvalue  # -> 5", 1)])
    assert runner.namespace["value"] == 5


# -- the API reference is generated from docstrings: every public name needs one -------------


_DOCUMENTED_MODULES = (
    "tooling",
    "agent_core",
    "agent_core.testing",
    "tooling.mcp",
    "tooling.auth",
    "tooling.builtin",
    "tooling.openapi",
    "tooling.adapters",
)


def _public_objects() -> Iterator[tuple[str, Any]]:
    import importlib

    for module in map(importlib.import_module, _DOCUMENTED_MODULES):
        for name in module.__all__:
            obj = getattr(module, name)
            yield f"{module.__name__}.{name}", obj
            if not inspect.isclass(obj):
                continue
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(value, property):
                    yield f"{module.__name__}.{name}.{attr}", value.fget
                elif isinstance(value, classmethod | staticmethod):
                    yield f"{module.__name__}.{name}.{attr}", value.__func__
                elif inspect.isfunction(value):
                    yield f"{module.__name__}.{name}.{attr}", value


def test_every_public_name_and_method_has_a_docstring() -> None:
    missing = [name for name, obj in _public_objects() if not (obj.__doc__ or "").strip()]
    assert missing == []


def test_the_api_reference_lists_every_public_name() -> None:
    import importlib

    pages = "\n".join(p.read_text() for p in (ROOT / "docs" / "reference").glob("*.md"))
    listed = set(re.findall(r"^::: ([\w.]+)", pages, flags=re.MULTILINE))
    missing = [
        f"{name}.{attr}"
        for name in (
            "tooling",
            "agent_core",
            "tooling.mcp",
            "tooling.auth",
            "tooling.builtin",
            "tooling.openapi",
            "tooling.adapters",
        )
        for attr in importlib.import_module(name).__all__
        if f"{name}.{attr}" not in listed
    ]
    assert missing == [], "add a '::: NAME' line for each to a page in docs/reference/"
