"""The adapter tests run against the real frameworks, in an environment of their own
(``.ci/run``'s adapters step): the main suite does not collect this folder."""

from __future__ import annotations

import os

# CrewAI reports usage over the network unless told not to; nothing leaves the machine.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
