"""Running a model's tool calls: the scheduler, a dispatch, planning, strategies, limits."""
