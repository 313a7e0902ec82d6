"""Tool names every provider accepts, and the way back from them.

A tool's own name follows the widest rule we take in (MCP's character set, SEP-986 with
``/``, up to 128 characters, a toolset's prefix included). Each provider is stricter:

- OpenAI (Chat Completions and Responses ``function.name``) and Anthropic (``tools[].name``):
  ``^[a-zA-Z0-9_-]{1,64}$``.
- Gemini (``FunctionDeclaration.name``): starts with a letter or ``_``; letters, digits,
  ``_``, ``.``, ``:`` and ``-``; at most 64 characters (the Gemini API's limit; Vertex AI
  allows 128).
- MCP (``Tool.name``, SEP-986 as the 2025-11-25 specification adopted it):
  ``^[A-Za-z0-9._-]{1,128}$``.

:func:`provider_name` keeps a name that fits as it is. Any other name has each character
the provider refuses replaced by ``_``, is cut to fit, and ends in ``_`` and 8 hex digits
of the original name's SHA-256: two names that differ map apart, and the mapping depends
on the name alone, so it is the same in every process and for every session. The way back
is a table (:func:`provider_aliases`) over the tools offered: a name is mapped back
exactly, never guessed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

__all__: list[str] = []

Provider = Literal["openai", "anthropic", "gemini", "mcp"]

PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "gemini", "mcp")

#: What a tool's own name may be: MCP's character set (``/`` included), 1 to 128 characters.
WIDE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_./-]{1,128}$")

#: Each provider's rule: (the whole-name pattern, the characters it refuses, its length).
_RULES: dict[str, tuple[re.Pattern[str], re.Pattern[str], int]] = {
    "openai": (re.compile(r"^[A-Za-z0-9_-]{1,64}$"), re.compile(r"[^A-Za-z0-9_-]"), 64),
    "anthropic": (re.compile(r"^[A-Za-z0-9_-]{1,64}$"), re.compile(r"[^A-Za-z0-9_-]"), 64),
    "gemini": (
        re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$"),
        re.compile(r"[^A-Za-z0-9_.:-]"),
        64,
    ),
    "mcp": (re.compile(r"^[A-Za-z0-9._-]{1,128}$"), re.compile(r"[^A-Za-z0-9._-]"), 128),
}

_HASH_CHARS = 8

#: A name every provider takes as it is (the rule of our own ``@tool`` names).
EVERYWHERE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def fits(name: str, provider: Provider) -> bool:
    """Whether ``provider`` accepts ``name`` as a tool name as it is."""
    return _RULES[provider][0].fullmatch(name) is not None


@lru_cache(maxsize=8192)
def provider_name(name: str, provider: Provider) -> str:
    """The name ``provider`` is given for the tool named ``name`` (``name`` when it fits)."""
    pattern, refused, limit = _RULES[provider]
    if pattern.fullmatch(name):
        return name
    safe = refused.sub("_", name)
    if provider == "gemini" and not (safe[0].isalpha() or safe[0] == "_"):
        safe = "_" + safe  # what remains is ASCII: the refused characters are gone
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    return f"{safe[: limit - _HASH_CHARS - 1]}_{digest}"


def provider_aliases(names: Iterable[str]) -> dict[str, str]:
    """Every provider's name for each of ``names``, mapped back to the tool's own name.

    A tool's own name maps to itself. Raises ``ValueError`` when two tools would reach a
    provider under one name (the message names both and the provider).
    """
    own = list(names)
    aliases: dict[str, str] = {name: name for name in own}
    for name in own:
        if EVERYWHERE.fullmatch(name):
            continue  # every provider takes it as it is
        for provider in PROVIDERS:
            wire = provider_name(name, provider)
            if wire == name:
                continue
            other = aliases.setdefault(wire, name)
            if other != name:
                raise ValueError(
                    f"tools {other!r} and {name!r} would both be named {wire!r} for "
                    f"{provider}: rename one of them"
                )
    return aliases


def renamed_for(names: Iterable[str]) -> dict[str, dict[str, str]]:
    """For each of ``names`` a provider would rename: ``{name: {provider: its name}}``."""
    found: dict[str, dict[str, str]] = {}
    for name in names:
        if EVERYWHERE.fullmatch(name):
            continue
        for provider in PROVIDERS:
            wire = provider_name(name, provider)
            if wire != name:
                found.setdefault(name, {})[provider] = wire
    return found
