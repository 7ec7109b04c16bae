"""M2 incast trees (Fang et al., 000) and IRS/SRS shuffles (Guo et al., 003) on BCube: ``dcnlab plan|reproduce|bench
aggregation`` (full references: :mod:`dcnlab.results.papers`).

* :mod:`~.model`: the paper-scale model sweep (parts 003-k, 003-size, 003-delta, 000-k, 000-size);
* :mod:`~.bmv2`: the BMv2 experiment (incasts and shuffles on BCube and fat-tree);
* :mod:`~.waiting`: the BMv2 experiment of 000's shuffle+reduce waiting time;
* :mod:`~.plots`: a tree on its fabric and the reproduction's charts;
* :mod:`~.headlines`: the papers' figures against ours; :mod:`~.readings_000`, :mod:`~.readings_003`: the
  readings of those that deviate; :mod:`~.search_000`, :mod:`~.search_003`: the sensitivity runs over the readings
  of the open settings (the pre-registered setting and every other admissible reading), :mod:`~.sensitivity`: which
  headlines a reading flips (``depends on``); :mod:`~.falsifiers`: a falsifier per headline;
* :mod:`~.reproduce`, :mod:`~.plan`, :mod:`~.bench`: what the commands compute.

May import: :mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` and below; no other mechanism's
package under :mod:`dcnlab.reproduce`.
"""
