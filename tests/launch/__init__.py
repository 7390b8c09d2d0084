"""Tests of the launch-layer (NM4xx) and dependency (NM5xx) rules and the notebook handler."""
