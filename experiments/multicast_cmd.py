"""CLI of the multicast mechanism: ``dcnlab plan multicast``, ``dcnlab reproduce multicast``, ``dcnlab bench multicast``.

Placeholder: the mechanism registers its subcommands here (see :mod:`experiments.plan_cmd`).
"""
