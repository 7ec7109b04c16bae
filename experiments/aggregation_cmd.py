"""CLI of the aggregation mechanism: ``dcnlab plan aggregation``, ``dcnlab reproduce aggregation``, ``dcnlab bench aggregation``.

Placeholder: the mechanism registers its subcommands here (see :mod:`experiments.plan_cmd`).
"""
