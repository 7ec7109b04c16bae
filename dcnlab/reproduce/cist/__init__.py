"""Completely independent spanning trees on Dragonfly (Bian et al., 004): ``dcnlab plan|reproduce|bench cist``.

* :mod:`~.model`: every instance (a = 3..8, h = 1..3, each arrangement) built and checked, and failure rounds on
  the survival instances;
* :mod:`~.opcount`: the construction's interpreter instructions against N, the judged figure of Theorems 5-7;
* :mod:`~.scaling`: the construction's CPU time against N (a figure of the full run, not judged);
* :mod:`~.bmv2`: the BMv2 experiment (broadcast over the CISTs survives failures);
* :mod:`~.headlines`: the paper's figures against ours;
* :mod:`~.reproduce`, :mod:`~.plan`, :mod:`~.bench`: what the commands compute.

May import: :mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` and below; no other mechanism's
package under :mod:`dcnlab.reproduce`.
"""
