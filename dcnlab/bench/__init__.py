"""The benchmarks of ``dcnlab bench``: ``topo`` (large fabrics' build time and memory), ``emu`` (BMv2 bring-up,
checks, teardown, P4Runtime write rates), ``chaos`` (kill -9 a run, clean, look for leftovers) and ``rounds``
(model rounds per second, local pool against a Dask cluster). Their argument parsing lives in
:mod:`dcnlab.cli.bench`; each mechanism's own benchmark lives in its package (``dcnlab/reproduce/<mechanism>/bench.py``).

May import: :mod:`dcnlab.reproduce` and everything below it; not :mod:`dcnlab.report` nor :mod:`dcnlab.cli`.
"""
