"""Read a docstring (Google, NumPy, reST or Epydoc) into a description and per-parameter text."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

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
    import docstring_parser  # imported when a spec is first built, not with the package

    text = inspect.cleandoc(doc)
    style = _style(text, docstring_parser.DocstringStyle)
    if style is None:  # no sections: the whole text is the description
        return ParsedDocstring(description=text.strip())
    try:
        parsed = docstring_parser.parse(text, style=style)
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


_GOOGLE = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Returns|Return|Raises|Yields|"
    r"Examples?|Attributes|Notes?):\s*$",
    re.MULTILINE,
)
_NUMPY = re.compile(r"^\s*-{3,}\s*$", re.MULTILINE)
_REST = re.compile(
    r"^\s*:(param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?)\b", re.MULTILINE
)
_EPYDOC = re.compile(r"^\s*@(param|type|return|rtype|raise)\b", re.MULTILINE)


def _style(text: str, styles: Any) -> Any:
    """Pick the style from cheap markers (None: no sections at all); letting
    docstring-parser try every style costs several times more."""
    if _NUMPY.search(text):
        return styles.NUMPYDOC
    if _REST.search(text):
        return styles.REST
    if _EPYDOC.search(text):
        return styles.EPYDOC
    if _GOOGLE.search(text):
        return styles.GOOGLE
    return None


def _one_paragraph(text: str) -> str:
    """Join a wrapped docstring entry into single spaced lines, keeping blank-line breaks."""
    paragraphs = [
        " ".join(line.strip() for line in block.splitlines()) for block in text.split("\n\n")
    ]
    return "\n\n".join(p for p in paragraphs if p)
