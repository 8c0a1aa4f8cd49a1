"""Tests (and a fixture for benches) over Docker-in-Docker nodes made on the test engine."""
