"""Other frameworks' tools in, ours out, with their meaning kept.

In: ``LangchainTool``, ``LangchainToolset`` (``[langchain]``) and ``CrewaiTool``
(``[crewai]``) make another framework's tool a ``BaseTool``. Out: ``to_langchain``
(``[langchain]``), ``to_openai_agents`` (``[openai-agents]``), ``to_pydantic_ai``
(``[pydantic-ai]``) and ``to_adk`` (``[adk]``) make one of ours a tool of that framework.
Each framework is imported only when its adapter is used.

The modules: ``_base`` (what every adapter shares: the checked call of a foreign tool,
one call of ours run as a scheduler would), then one module per framework.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adk import to_adk
    from .crewai import CrewaiTool
    from .langchain import LangchainTool, LangchainToolset, to_langchain
    from .openai_agents import to_openai_agents
    from .pydantic_ai import to_pydantic_ai

__all__ = [
    "CrewaiTool",
    "LangchainTool",
    "LangchainToolset",
    "to_adk",
    "to_langchain",
    "to_openai_agents",
    "to_pydantic_ai",
]

_MODULES = {
    "CrewaiTool": "crewai",
    "LangchainTool": "langchain",
    "LangchainToolset": "langchain",
    "to_langchain": "langchain",
    "to_openai_agents": "openai_agents",
    "to_pydantic_ai": "pydantic_ai",
    "to_adk": "adk",
}


def __getattr__(name: str) -> Any:
    # Each adapter's module is loaded when first asked for; it imports its framework
    # only when an adapter is built.
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'tooling.adapters' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
