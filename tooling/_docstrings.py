"""Read a docstring (Google, NumPy, reST or Epydoc) into a description and per-parameter text."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import docstring_parser

__all__ = ["ParsedDocstring", "parse_docstring"]


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """What a tool takes from its docstring.

    ``description`` is the summary and body, then the Returns text; the Args, Raises,
    Examples and Yields sections are left out. ``params`` maps a documented parameter
    name to its text, in docstring order.
    """

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


_EMPTY = ParsedDocstring()


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Parse ``doc`` with docstring-parser, detecting its style."""
    if not doc or not doc.strip():
        return _EMPTY
    text = inspect.cleandoc(doc)
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:
        # A docstring that is not well-formed in any style is still a fine description.
        return ParsedDocstring(description=text.strip())

    pieces = [p.strip() for p in (parsed.short_description, parsed.long_description) if p]
    returns = parsed.returns
    if returns is not None and not returns.is_generator and returns.description:
        pieces.append(f"Returns: {_one_paragraph(returns.description)}")
    params = {
        p.arg_name: _one_paragraph(p.description)
        for p in parsed.params
        if p.description and p.description.strip()
    }
    return ParsedDocstring(description="\n\n".join(pieces), params=params)


def _one_paragraph(text: str) -> str:
    """Join a wrapped docstring entry into single spaced lines, keeping blank-line breaks."""
    paragraphs = [" ".join(line.strip() for line in block.splitlines()) for block in text.split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)
