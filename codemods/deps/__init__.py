"""Dependency rules (NM5xx): requirements files, pyproject.toml, setup.py/setup.cfg and pip install lines."""
