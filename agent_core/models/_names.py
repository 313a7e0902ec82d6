"""Model names: ``"openai:gpt-5-mini"``, ``"anthropic:claude-sonnet-4-5"``,
``"google:gemini-2.5-flash"`` or a bare ``"gemini-..."`` name, to the model that serves it.
"""

from __future__ import annotations

from .base import BaseLlm

__all__: list[str] = []

#: The environment variables each provider's key may come from.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}


def provider_of(name: str) -> tuple[str, str]:
    """``(provider, model)`` for a model name; ``ValueError`` for a name that names none."""
    prefix, sep, rest = name.partition(":")
    if sep and prefix in KEY_VARIABLES and rest:
        return prefix, rest
    if not sep and name.startswith("gemini"):
        return "google", name
    raise ValueError(
        f"model {name!r} is not a known model name: use 'openai:MODEL', 'anthropic:MODEL', "
        "'google:MODEL' or a 'gemini-...' name, or pass a BaseLlm (e.g. ScriptedModel)"
    )


def model_from_name(name: str) -> BaseLlm:
    """The model a name stands for (its SDK is imported here; no key is needed yet)."""
    provider, model = provider_of(name)
    if provider == "openai":
        from .openai import OpenAIModel

        return OpenAIModel(model)
    if provider == "anthropic":
        from .anthropic import AnthropicModel

        return AnthropicModel(model)
    from .gemini import GeminiModel

    return GeminiModel(model)
