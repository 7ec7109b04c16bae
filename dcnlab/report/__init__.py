"""The report of ``dcnlab reproduce all``: the orchestration of the five papers' reproductions in one run
(:mod:`~dcnlab.report.reproduce_all`), the readings of the headlines that deviate
(:mod:`~dcnlab.report.readings`), the search of the settings the papers leave open
(:mod:`~dcnlab.report.search`, ``dcnlab reproduce search``) and the writing of ``report.md``, ``report.html``
and ``summary.json`` (:mod:`~dcnlab.report.write`).

May import: :mod:`dcnlab.reproduce` (every mechanism) and everything below it; not :mod:`dcnlab.bench` nor
:mod:`dcnlab.cli`. The reproductions never import the report.
"""
