"""A run's lifecycle: launch, the agent phase, grading a run, upkeep."""
