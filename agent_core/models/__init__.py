"""Models the agent loop can ask: the base class, a scripted model, Gemini."""
