"""Two tools used one after the other: a weather report, then the sentiment of the reply.

Both answer with a ``status`` key so the model knows what happened without parsing
prose: ``get_weather_report`` gives ``"success"`` and a ``report``, or ``"error"`` and an
``error_message`` for a city it has no data for; ``analyze_sentiment`` gives a
``sentiment`` label with a ``confidence``, or ``"error"`` for empty text. The
instruction tells the model what to do with each outcome, and in which order to use
the tools.

The reports are canned (no network): London, Paris, Tokyo, New York and Sydney.
"""

from __future__ import annotations

import re
from typing import Any

from agent_core import Agent
from tooling import tool

_REPORTS = {
    "london": "Cloudy in London, 18 °C, with light rain likely this afternoon.",
    "paris": "Sunny in Paris, 25 °C, with a light breeze.",
    "tokyo": "Humid in Tokyo, 29 °C, with scattered showers in the evening.",
    "new york": "Clear skies in New York, 22 °C.",
    "sydney": "Windy in Sydney, 16 °C, with sunny spells.",
}

_POSITIVE = {"good", "great", "love", "lovely", "nice", "sunny", "like", "perfect", "enjoy"}
_NEGATIVE = {"bad", "hate", "awful", "rain", "cold", "terrible", "gloomy", "dislike"}
_NEGATIONS = {"not", "don't", "dont", "never", "no", "isn't", "can't"}


@tool(read_only=True, concurrency_safe=True)
def get_weather_report(city: str) -> dict[str, Any]:
    """Get the current weather report for a city.

    Args:
        city: The city's name, such as "London".

    Returns:
        {"status": "success", "city", "report"} with the report, or
        {"status": "error", "error_message"} when there is no report for the city.
    """
    report = _REPORTS.get(city.strip().lower())
    if report is None:
        return {
            "status": "error",
            "error_message": f"No weather report is available for {city!r}.",
        }
    return {"status": "success", "city": city.strip().title(), "report": report}


@tool(read_only=True, concurrency_safe=True)
def analyze_sentiment(text: str) -> dict[str, Any]:
    """Tell whether a piece of text sounds positive, negative or neutral.

    Args:
        text: What the user said, word for word.

    Returns:
        {"status": "success", "sentiment": "positive" | "negative" | "neutral",
        "confidence": 0..1}, or {"status": "error", "error_message"} for empty text.
    """
    words = re.findall(r"[a-z']+", text.lower())
    if not words:
        return {"status": "error", "error_message": "There is no text to analyze."}
    score = 0
    for i, word in enumerate(words):
        sign = -1 if i > 0 and words[i - 1] in _NEGATIONS else 1
        if word in _POSITIVE:
            score += sign
        elif word in _NEGATIVE:
            score -= sign
    sentiment = "positive" if score > 0 else "negative" if score < 0 else "neutral"
    confidence = round(min(0.5 + 0.15 * abs(score), 0.95), 2)
    return {"status": "success", "sentiment": sentiment, "confidence": confidence}


root_agent = Agent(
    name="weather_sentiment",
    model="gemini-2.5-flash",
    description="Gives weather reports and reads how the user feels about them.",
    instruction=(
        "You give weather reports and pay attention to how the user feels about them.\n"
        "1. When the user asks about the weather in a city, call get_weather_report.\n"
        "   - status 'success': tell the user the report.\n"
        "   - status 'error': say there is no report for that city and ask whether "
        "another city would do.\n"
        "2. When the user reacts to a report (for example 'lovely' or 'I hate rain'), "
        "call analyze_sentiment with their exact words, then acknowledge the feeling in "
        "one short sentence.\n"
        "Use the tools in that order when a message needs both."
    ),
    tools=[get_weather_report, analyze_sentiment],
)
