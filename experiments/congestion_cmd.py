"""CLI of the congestion mechanism: ``dcnlab plan congestion``, ``dcnlab reproduce congestion``, ``dcnlab bench congestion``.

Placeholder: the mechanism registers its subcommands here (see :mod:`experiments.plan_cmd`).
"""
