"""The agent-core commands: run's conversation and printing, shared support, worker and jobs."""
