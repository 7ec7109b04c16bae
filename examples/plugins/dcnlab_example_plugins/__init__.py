"""dcnlab plug-ins written as a researcher would: each a few lines against one small interface.

* :class:`~dcnlab_example_plugins.multicast.ShortestPathTrees` (``dcnlab.multicast``: ``spt``)
* :func:`~dcnlab_example_plugins.aggregation.takahashi_matsuyama` (``dcnlab.aggregation``: ``tm``)
"""
