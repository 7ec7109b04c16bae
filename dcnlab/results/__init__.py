"""What every reproduction and benchmark writes, and the rules that judge it: the headline records and the
verdict rule of ``summary.json`` (:mod:`~dcnlab.results.summary`), the printed tables
(:mod:`~dcnlab.results.tables`), the goal line of a benchmark (:mod:`~dcnlab.results.goals`), the output
paths checked before the work (:mod:`~dcnlab.results.outputs`), the reading records of the headlines that
deviate (:mod:`~dcnlab.results.readings`), the settings each paper leaves open with their committed
searches (:mod:`~dcnlab.results.open_settings`, ``search_tables/``) and the papers' references
(:mod:`~dcnlab.results.papers`).

May import: the API, the emulation and everything below them (in practice :mod:`dcnlab.topos`); not
:mod:`dcnlab.sweep`, :mod:`dcnlab.figures` nor anything above.
"""
