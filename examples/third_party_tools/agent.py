"""Other frameworks' tools in one agent, beside our own.

``convert_currency`` is a LangChain tool (``@tool(response_format="content_and_artifact")``):
the model gets a sentence, the application the rate table behind it (on the function
response's ``artifact``). ``WeatherForecast`` is a CrewAI tool with an ``args_schema``,
run by its own ``run`` on a worker thread. ``packing_list`` is a function of ours. The
agent sees three tools with exact schemas; a model asks for the forecast and the
conversion in one turn, then the packing list.

Needs the ``langchain`` and ``crewai`` extras: ``pip install -e '.[langchain,crewai]'``.
"""

from __future__ import annotations

import os

from crewai.tools import BaseTool as CrewaiBaseTool
from langchain_core.tools import tool as langchain_tool
from pydantic import BaseModel, Field

from agent_core import Agent
from tooling.adapters import CrewaiTool, LangchainTool

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # nothing leaves the machine

RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("GBP", "EUR"): 1.17}


@langchain_tool(response_format="content_and_artifact")
def convert_currency(amount: float, source: str, target: str = "EUR") -> tuple[str, dict]:
    """Convert an amount of money between currencies (USD, EUR, GBP)."""
    rate = RATES.get((source.upper(), target.upper()))
    if rate is None:
        return f"No rate from {source} to {target}.", {"rates": {}}
    table = {f"{a}->{b}": r for (a, b), r in RATES.items()}
    return f"{amount:g} {source.upper()} is {amount * rate:.2f} {target.upper()}.", {
        "rate": rate,
        "rates": table,
    }


class ForecastArgs(BaseModel):
    city: str = Field(description="The city to forecast")
    days: int = Field(default=3, description="How many days ahead, 1 to 7")


FORECASTS = {"lisbon": [22, 24, 23, 21, 20, 22, 23], "oslo": [4, 2, 1, 3, 5, 4, 2]}


class WeatherForecast(CrewaiBaseTool):
    name: str = "weather_forecast"
    description: str = "The daily high temperatures (°C) for a city."
    args_schema: type[BaseModel] = ForecastArgs

    def _run(self, city: str, days: int = 3) -> str:
        highs = FORECASTS.get(city.lower())
        if highs is None:
            return f"No forecast for {city}."
        shown = ", ".join(f"{t} °C" for t in highs[: max(1, min(days, 7))])
        return f"Highs in {city}: {shown}."


def packing_list(high_c: float, days: int = 3) -> dict:
    """What to pack for a trip.

    Args:
        high_c: The typical daily high temperature, in °C.
        days: How long the trip is.
    """
    items = ["passport", "charger", f"{days} changes of clothes"]
    items += ["sunglasses", "sunscreen"] if high_c >= 18 else ["warm coat", "gloves"]
    return {"items": items}


root_agent = Agent(
    "trip_helper",
    "gemini-2.5-flash",
    description="Plans trips with a forecast, a currency converter and a packing list.",
    instruction=(
        "Help the user plan a trip. Use weather_forecast for the weather, convert_currency "
        "for money, and packing_list once you know the temperature."
    ),
    tools=[LangchainTool(convert_currency), CrewaiTool(WeatherForecast()), packing_list],
)
