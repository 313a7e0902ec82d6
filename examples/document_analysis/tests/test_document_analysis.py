"""The document_analysis example: artifact in, memory searched, new analysis versions out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agent_core import InMemoryArtifactService
from examples._snapshots import check_snapshot

EXAMPLE = Path(__file__).resolve().parent.parent


def test_replay_matches_snapshot() -> None:
    artifacts = InMemoryArtifactService()
    replay = check_snapshot(EXAMPLE, artifact_service=artifacts)
    versions = []
    for exchange in replay.exchanges:
        response = exchange.events[1]
        body = response.get_function_responses()[0].response
        assert body["status"] == "success" and body["memory_notes"]
        versions.append(response.actions.artifact_delta)
    assert versions == [{"analysis_quarterly_report.txt": 0}, {"analysis_quarterly_report.txt": 1}]

    session = replay.session
    where: dict[str, Any] = {
        "app_name": session.app_name,
        "user_id": session.user_id,
        "session_id": session.id,
    }

    async def saved() -> tuple[list[str], list[int], str]:
        keys = await artifacts.list_artifact_keys(**where)
        found = await artifacts.list_versions(**where, filename="analysis_quarterly_report.txt")
        latest = await artifacts.load_artifact(**where, filename="analysis_quarterly_report.txt")
        assert latest is not None
        return keys, found, latest.data.decode()

    keys, found, latest = asyncio.run(saved())
    assert keys == ["analysis_quarterly_report.txt", "quarterly_report.txt"]
    assert found == [0, 1]
    assert "churn" in latest and "flag customer churn above 5%" in latest
