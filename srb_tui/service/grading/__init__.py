"""Host-side grading: the stage ladder, the stages, re-runs, the identity run."""
