"""dcnlab plug-ins written as a researcher would: each a few lines against one small interface.

* :class:`~dcnlab_example_plugins.multicast.ShortestPathTrees` (``dcnlab.multicast``: ``spt``)
* :func:`~dcnlab_example_plugins.aggregation.takahashi_matsuyama` (``dcnlab.aggregation``: ``tm``)
* :data:`~dcnlab_example_plugins.paper.REPRODUCTION` (``dcnlab.reproductions``: ``fattree-counts``): a paper's
  figures reproduced and judged in ``dcnlab reproduce all``'s report
"""
