"""Fixtures of the capture tests (defined in capture_env, imported here to register them)."""

from capture_env import live, prom, servers

__all__ = ["live", "prom", "servers"]
