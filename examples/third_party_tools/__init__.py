"""A LangChain tool and a CrewAI tool beside our own: ``python -m examples.third_party_tools``."""
