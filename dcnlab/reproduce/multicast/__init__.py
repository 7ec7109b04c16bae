"""C-MR4LMS multicast on the midplane fat-tree (Chen et al., 001): ``dcnlab plan|reproduce|bench multicast``.

* :mod:`~.model`: the paper-scale model sweep (the patterns of the paper's §4 under every algorithm);
* :mod:`~.bmv2`: the BMv2 experiment (a small midplane fat-tree, link failures, the model's trees);
* :mod:`~.headlines`: the paper's figures against ours; :mod:`~.readings`: the readings of those that
  deviate; :mod:`~.search`: the search of the open settings;
* :mod:`~.plan`, :mod:`~.bench`: what ``plan`` and ``bench multicast`` compute.

May import: :mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` and below; no other mechanism's
package under :mod:`dcnlab.reproduce`.
"""
