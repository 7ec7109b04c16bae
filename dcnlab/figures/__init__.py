"""The look of every figure dcnlab draws: the shared style of the reproductions' plots
(:mod:`~dcnlab.figures.plotstyle`), the checker every plot passes before it is saved
(:mod:`~dcnlab.figures.plotcheck`) and a fabric drawn to PNG (:mod:`~dcnlab.figures.render`).

May import: the API, the emulation and everything below them (in practice :mod:`dcnlab.topos` and
matplotlib); not :mod:`dcnlab.sweep`, :mod:`dcnlab.results` nor anything above.
"""
