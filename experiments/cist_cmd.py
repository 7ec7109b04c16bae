"""CLI of the cist mechanism: ``dcnlab plan cist``, ``dcnlab reproduce cist``, ``dcnlab bench cist``.

Placeholder: the mechanism registers its subcommands here (see :mod:`experiments.plan_cmd`).
"""
