"""Where model rounds run: the one fan-out of every sweep on local processes or a Dask cluster
(:mod:`~dcnlab.sweep.pool`; its local process pool, which fails fast and names a worker that died,
:mod:`~dcnlab.sweep.local`), the Dask worker plugin that warms the engine's kernels
(:mod:`~dcnlab.sweep.warm_plugin`), and the progress display of long work (:mod:`~dcnlab.sweep.progress`).

May import: the API, the emulation and everything below them (in practice only :mod:`dcnlab.topos`; the worker
plugin needs ``dask.distributed``, imported only with ``--cluster``); not :mod:`dcnlab.figures`,
:mod:`dcnlab.results` nor anything above.
"""
