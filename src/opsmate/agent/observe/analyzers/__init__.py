"""Analyzers, one module per family of records (pods, events, nodes, logs, metrics ...).

Every module here is imported by the registry and registers its analyzers with
:func:`opsmate.agent.observe.registry.for_tools` / :func:`~.over_graph`.
"""
