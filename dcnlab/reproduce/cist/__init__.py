"""Completely independent spanning trees on Dragonfly (Bian et al., 004): ``dcnlab plan|reproduce|bench cist``.

* :mod:`~.model`: the model sweep (constructions, validations and failure rounds on every instance);
* :mod:`~.scaling`: the construction time against N (Theorems 5-7);
* :mod:`~.bmv2`: the BMv2 experiment (broadcast over the CISTs survives failures);
* :mod:`~.headlines`: the paper's figures against ours;
* :mod:`~.reproduce`, :mod:`~.plan`, :mod:`~.bench`: what the commands compute.

May import: :mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` and below; no other mechanism's
package under :mod:`dcnlab.reproduce`.
"""
