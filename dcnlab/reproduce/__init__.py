"""The papers' reproductions, one package per mechanism: ``aggregation`` (M2, Fang et al., 000; IRS/SRS, Guo et al.,
003), ``multicast`` (C-MR4LMS, Chen et al., 001), ``congestion`` (IB CC partitioning, Zhang et al., 002) and ``cist``
(Dragonfly CISTs, Bian et al., 004); :mod:`dcnlab.results.papers` has the full references.

Each package holds all of its mechanism's reproduction: the model sweep (``model``), the BMv2 experiment
(``bmv2``), the paper's headlines against ours (``headlines``, which also writes ``summary.json``), the
readings of the headlines that deviate (``readings``), the plots, the search of the paper's open settings
(``search``), what ``dcnlab reproduce|plan|bench <mechanism>`` compute (``reproduce``, ``plan``, ``bench``)
and the mechanism's benchmark, and one ``reproduction`` module whose object drives it all for ``dcnlab reproduce
all`` through one interface (:mod:`~dcnlab.reproduce.protocol`; :mod:`~dcnlab.reproduce.registry` finds them, and
a user's reproduction plug-ins). To change one mechanism's reproduction, open its package only.

May import: :mod:`dcnlab.sweep`, :mod:`dcnlab.figures`, :mod:`dcnlab.results` and everything below them (the
API, the emulation, the traffic agents, the controller, the fabrics). A mechanism's package never imports
another's: what two share lives in one of those lower packages. Not :mod:`dcnlab.report`,
:mod:`dcnlab.bench` nor :mod:`dcnlab.cli`.
"""
