"""The report of ``dcnlab reproduce all``: the orchestration of every reproduction in one run
(:mod:`~dcnlab.report.reproduce_all`), the readings of the headlines that deviate
(:mod:`~dcnlab.report.readings`), the search of the settings the papers leave open
(:mod:`~dcnlab.report.search`, ``dcnlab reproduce search``) and the writing of ``report.md``, ``report.html``
and ``summary.json`` (:mod:`~dcnlab.report.write`).

May import: of :mod:`dcnlab.reproduce`, only the reproductions' interface (:mod:`dcnlab.reproduce.protocol`) and
their registry (:mod:`dcnlab.reproduce.registry`), never a mechanism's package by name (tests/test_house.py);
everything below :mod:`dcnlab.reproduce`; not :mod:`dcnlab.bench` nor :mod:`dcnlab.cli`. The reproductions never
import the report.
"""
