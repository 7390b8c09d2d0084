"""Helpers shared by rules (device expression, call/keyword editing). Not rules: never scanned."""
