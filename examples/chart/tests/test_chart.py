"""The chart example: the tool draws a real PNG and returns it as an image part."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def read_png(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and raw scanlines of an 8-bit RGB PNG, checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert (depth, colour) == (8, 2)
    return width, height, zlib.decompress(idat)


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    _, response_event, _ = replay.exchanges[0].events
    (response,) = response_event.get_function_responses()
    assert response.response["image"] == {"part": 0, "mime_type": "image/png"}
    assert response.response["highest"] == "April" and response.response["lowest"] == "March"
    (part,) = response.parts or []
    assert part.inline_data is not None and part.inline_data.mime_type == "image/png"
    width, height, raw = read_png(part.inline_data.data)
    assert (width, height) == (response.response["width"], response.response["height"])
    assert len(raw) == height * (1 + 3 * width)
    row = raw[(height - 11) * (1 + 3 * width) :][: 1 + 3 * width]  # just above the baseline
    assert row[1 + 3 * 10 : 1 + 3 * 11] == bytes((66, 133, 244))  # the first bar, blue
    assert row[1 : 1 + 3] == bytes((255, 255, 255))  # the margin, white
