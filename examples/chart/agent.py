"""A tool that draws a bar chart as a PNG and returns the image to the model.

``render_bar_chart`` paints the bars into an RGB pixel grid and encodes it as a PNG by
hand (``zlib`` and ``struct`` from the standard library: no imaging package). It returns
the numbers together with ``Blob("image/png", data)``: the framework lifts the blob out
of the dict into a part of the function response (in the dict it becomes
``{"part": 0, "mime_type": "image/png"}``), so the model receives the picture next to
the figures it was drawn from.

Sending images back in function responses needs a model that accepts them; set
``CHART_MODEL`` to choose the Gemini model used live (default ``gemini-2.5-flash``).
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Annotated, Any

from pydantic import Field

from agent_core import Agent
from tooling import Blob, ToolError, tool

HEIGHT = 120
BAR_WIDTH = 24
GAP = 8
MARGIN = 10
BACKGROUND = (255, 255, 255)
AXIS = (60, 60, 60)
PALETTE = [(66, 133, 244), (219, 68, 55), (244, 180, 0), (15, 157, 88), (171, 71, 188)]


def encode_png(width: int, height: int, rows: list[bytes]) -> bytes:
    """An 8-bit RGB PNG from ``rows`` (``height`` rows of ``3 * width`` bytes each)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 (none) per row
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def draw_bars(values: list[float]) -> tuple[int, int, list[bytes]]:
    """The pixel rows of a bar chart of ``values`` (non-negative), tallest bar full height."""
    width = 2 * MARGIN + len(values) * BAR_WIDTH + (len(values) - 1) * GAP
    top = max(values) or 1.0
    plot = HEIGHT - 2 * MARGIN
    pixels = [[BACKGROUND] * width for _ in range(HEIGHT)]
    for i, value in enumerate(values):
        left = MARGIN + i * (BAR_WIDTH + GAP)
        bar = round(plot * value / top)
        for y in range(HEIGHT - MARGIN - bar, HEIGHT - MARGIN):
            for x in range(left, left + BAR_WIDTH):
                pixels[y][x] = PALETTE[i % len(PALETTE)]
    for x in range(MARGIN // 2, width - MARGIN // 2):  # the baseline
        pixels[HEIGHT - MARGIN][x] = AXIS
    rows = [bytes(channel for pixel in row for channel in pixel) for row in pixels]
    return width, HEIGHT, rows


@tool(read_only=True, concurrency_safe=True)
def render_bar_chart(
    title: str,
    labels: Annotated[list[str], Field(min_length=1, max_length=12)],
    values: Annotated[list[Annotated[float, Field(ge=0)]], Field(min_length=1, max_length=12)],
) -> dict[str, Any]:
    """Draw a bar chart and return it as a PNG image, with the figures it shows.

    Bars go left to right in the order given, in colours that repeat every five bars.

    Args:
        title: What the chart shows, such as "Signups per month".
        labels: One label per bar, such as month names.
        values: One non-negative number per bar, in the same order as the labels.

    Returns:
        {"title", "bars": [{"label", "value", "colour"}], "highest", "lowest",
        "width", "height", "image"}: "image" refers to the PNG sent with the response.
    """
    if len(labels) != len(values):
        raise ToolError(
            f"got {len(labels)} labels for {len(values)} values: give one label per value",
            code="chart.mismatched_lengths",
        )
    width, height, rows = draw_bars(values)
    names = ["blue", "red", "yellow", "green", "purple"]
    bars = [
        {"label": label, "value": value, "colour": names[i % len(names)]}
        for i, (label, value) in enumerate(zip(labels, values, strict=True))
    ]
    return {
        "title": title,
        "bars": bars,
        "highest": labels[values.index(max(values))],
        "lowest": labels[values.index(min(values))],
        "width": width,
        "height": height,
        "image": Blob("image/png", encode_png(width, height, rows)),
    }


root_agent = Agent(
    name="chart_maker",
    model=os.environ.get("CHART_MODEL", "gemini-2.5-flash"),
    description="Draws bar charts of the user's figures.",
    instruction=(
        "You draw charts. When the user gives figures to compare, call render_bar_chart "
        "with a short title, the labels and the values, then describe the chart you "
        "received in two sentences: what is highest and lowest, and the overall trend."
    ),
    tools=[render_bar_chart],
)
