"""``python -m examples.durable_report``: the replay offline, or live with a Gemini key."""

import sys
from pathlib import Path

from examples._replay import main

sys.exit(main(Path(__file__).parent))
