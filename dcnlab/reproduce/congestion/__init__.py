"""Bandwidth partition by IB congestion control (Zhang et al., 002): ``dcnlab plan|reproduce|bench congestion``.

* :mod:`~.model`: the paper's scenarios and a large-scale exploration on the fluid model, and their checks;
* :mod:`~.plots`: the reproduction's figures;
* :mod:`~.bmv2`: the BMv2 experiment (meters and ECN marks as IB's CC on a small fabric);
* :mod:`~.headlines`: the paper's figures against ours; :mod:`~.readings`: the readings of those that
  deviate; :mod:`~.search`: the search of the open settings;
* :mod:`~.reproduce`, :mod:`~.plan`, :mod:`~.bench`: what the commands compute.

May import: :mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` and below; no other mechanism's
package under :mod:`dcnlab.reproduce`.
"""
