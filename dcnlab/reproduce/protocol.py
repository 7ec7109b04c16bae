"""What a reproduction is: one small interface that ``dcnlab reproduce all``, ``dcnlab reproduce NAME``, the
sensitivity run (``dcnlab reproduce search``) and the Dask path drive, for dcnlab's own papers and a user's.

A reproduction is an object of a subclass of :class:`Reproduction`, found by name in
:mod:`dcnlab.reproduce.registry` (dcnlab's own four, then the entry point group ``dcnlab.reproductions``). It says

* **what it reproduces**: :attr:`~Reproduction.name` (its directory ``OUT/<name>/`` and its command
  ``dcnlab reproduce <name>``), :attr:`~Reproduction.title`, :attr:`~Reproduction.papers` (each a
  :class:`~dcnlab.results.papers.Paper`, cited in the report) and :meth:`~Reproduction.headline_ids`;
* **its work for a mode and a seed**: :meth:`~Reproduction.tasks` gives picklable :class:`Task` s, each with a
  ``kind`` the progress display names and an estimate of its CPU ``seconds`` (the longest start first, the time
  left is estimated from them); :attr:`~Reproduction.run_task` runs one task's ``arg`` and must be a
  **module-level function** (a process pool and a Dask worker both find it by its module and name);
* **its outputs**: :meth:`~Reproduction.finish` turns the tasks' results (in the order of its tasks) into its
  files in ``out`` and the figures :meth:`~Reproduction.headlines` reads; :meth:`~Reproduction.headlines` is
  a pure function of those figures (and BMv2's), each headline judged by the report's one rule
  (:func:`dcnlab.results.summary.verdict`), so a deliberately wrong figure fed through it must come out
  ``deviates``: a falsifier runs the same pipeline;
* **its command's options**: :meth:`~Reproduction.configure` gives the reproduction as ``dcnlab reproduce <name>``
  runs it with that command's own options (dcnlab's ``--algo``, ``--only``, ``--topo`` ...), and
  :meth:`~Reproduction.printed` what that command prints (default: the report's table of its headlines); the
  command runs it through the same runner as ``reproduce all`` (:func:`dcnlab.report.reproduce_all.run_one`);
* optionally **its BMv2 experiment** (:meth:`~Reproduction.emulate`), work that must run alone
  (:meth:`~Reproduction.measure_alone`, e.g. timings), **the readings** of the headlines that deviate
  (:meth:`~Reproduction.readings`), **its sensitivity run** over the settings its papers leave open
  (:meth:`~Reproduction.sensitivity`, one :class:`Searcher` per paper) and **the falsifier of each headline** in
  one phrase (:meth:`~Reproduction.falsifiers`, listed in the report).

May import: :mod:`dcnlab.results` and below, like every reproduction; never a mechanism's package.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dcnlab.results.papers import Paper
    from dcnlab.results.readings import Reading
    from dcnlab.results.summary import Headline

MODES = ("full", "quick", "smoke")
"""``full``: the paper's scale; ``quick`` (``--quick``): every headline, fewer rounds; ``smoke`` (hidden
``--smoke``): a few seconds, for tests, every headline still a record."""
GROUP = "dcnlab.reproductions"
"""The entry point group a user's reproduction is declared in."""


@dataclass(frozen=True)
class Task:
    """One unit of model work: ``kind`` (what the progress display names: ``003-size``, ``mr4lms``), its
    argument (picklable, given to :attr:`Reproduction.run_task`) and an estimate of its CPU seconds."""

    kind: str
    arg: Any
    seconds: float
    user: bool = False
    """Whether it runs a user's code (``--algo``): such tasks start first, so a plug-in that fails on its first
    task ends the run at once instead of after dcnlab's own tasks."""


@dataclass(frozen=True)
class Run:
    """How the model part ran: the mode, the base seed (None: the reproduction's default), the workers, its
    wall seconds, the command that ran it and the cluster it ran on."""

    mode: str
    seed: int | None = None
    workers: int | None = None
    seconds: float = 0.0
    by: str = "dcnlab reproduce all"
    cluster: str | None = None
    """The Dask scheduler's address when the model ran on a cluster."""

    @property
    def quick(self) -> bool:
        return self.mode != "full"


@dataclass
class Finished:
    """What :meth:`Reproduction.finish` wrote (``files``; the runner writes ``summary.json`` from
    :meth:`Reproduction.headlines`, so ``finish`` need not) and the figures its headlines are read from
    (``model``)."""

    model: Any
    files: list[Path] = field(default_factory=list)


@dataclass
class Emulation:
    """What :meth:`Reproduction.emulate` measured (``data``, what :meth:`Reproduction.headlines` reads), why or how
    it ran (``why``), whether every check held, the files it wrote and the lines that say it (for
    :meth:`Reproduction.printed`)."""

    data: Any
    why: str
    ok: bool
    files: list[Path] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """What one reproduction run alone gave (``dcnlab reproduce NAME``), for :meth:`Reproduction.printed`: its
    directory, the run, where its model ran, its tasks, the figures and files :meth:`Reproduction.finish` gave
    (``files`` also those of :meth:`Reproduction.measure_alone`), ``planned``: why its BMv2 part ran or
    not as ``--emulate`` decided, and what that part gave (``emulation`` None: it did not run)."""

    out: Path
    run: Run
    where: str
    tasks: Sequence[Task]
    model: Any
    files: list[Path]
    planned: str
    emulation: Any = None
    emulation_why: str = ""
    emulation_ok: bool | None = None
    emulation_lines: list[str] = field(default_factory=list)
    emulation_files: list[Path] = field(default_factory=list)


class Searcher(Protocol):
    """One paper's sensitivity run over the settings its text leaves open (:mod:`dcnlab.results.open_settings`;
    see :mod:`dcnlab.reproduce.multicast.search`)."""

    paper: str

    def is_random(self, setting: Mapping[str, str]) -> bool:
        """Whether ``setting`` must be run over several draws."""

    def tasks(self, setting: Mapping[str, str], draw: int, quick: bool) -> list[Hashable]:
        """The model tasks ``setting`` needs on draw ``draw`` (equal tasks are run once)."""

    def run(self, task: Hashable) -> Any:
        """One task's result (in a worker process; ``task`` and the result picklable)."""

    def seconds(self, task: Hashable) -> float:
        """A rough estimate of one task's CPU seconds (the longest start first)."""

    def headlines(self, setting: Mapping[str, str], draw: int, results: Mapping[Hashable, Any]) -> list[Headline]:
        """The paper's headlines under ``setting`` on draw ``draw``, from the tasks' results."""

    def extra(self, results: Mapping[Hashable, Any], quick: bool) -> dict[str, Any]:
        """Anything else the report shows (e.g. the bounds of :data:`open_settings.BOUNDS`; ``note``: what ran, when
        it is not the reproduction's scale). A searcher may also have ``warm()``, run before the workers start
        (e.g. to compile numba kernels once)."""


class Reproduction(ABC):
    """One reproduction of one or more papers (module docstring). Subclass it, set :attr:`name`, :attr:`title`,
    :attr:`papers` and :attr:`run_task` (``staticmethod(a_module_level_function)``), implement :meth:`tasks`,
    :meth:`finish` and :meth:`headlines`; the rest is optional."""

    name: str = ""
    """Its directory in ``reproduce all``'s output and its command: ``dcnlab reproduce <name>``."""
    title: str = ""
    """What it reproduces, in a few words (the report's section heading starts with it)."""
    papers: tuple[Paper, ...] = ()
    """The papers it reproduces; each headline's ``seed`` is one of their ids."""
    has_emulation: bool = False
    """Whether :meth:`emulate` runs a BMv2 experiment."""
    user_code: bool = False
    """Whether its tasks run code from outside dcnlab that they name by a string (a user's ``--algo``): their results
    are never served from dcnlab's task cache (:mod:`dcnlab.sweep.cache` keys dcnlab's code only)."""
    warm_up: Callable[[], object] | None = None
    """A module-level function run once in each worker before its first task (e.g. to compile numba kernels):
    ``staticmethod(f)``."""

    @staticmethod
    def run_task(arg: Any) -> Any:
        """One task's result from its ``arg``, in a worker process: override with ``staticmethod(f)`` of a
        module-level function ``f`` (the pool and Dask pickle it by name)."""
        raise NotImplementedError

    @abstractmethod
    def tasks(self, mode: str, seed: int | None) -> list[Task]:
        """The model tasks of ``mode`` (:data:`MODES`) with base seed ``seed`` (None: the reproduction's default)."""

    @abstractmethod
    def finish(self, out: Path, run: Run, tasks: Sequence[Task], results: Sequence[Any]) -> Finished:
        """Write the model part's outputs into ``out`` (``results[i]`` is ``tasks[i]``'s); the figures the
        headlines read and the files written."""

    @abstractmethod
    def headlines(self, out: Path | None, model: Any, emulation: Any, model_why: str = "") -> list[Headline]:
        """The papers' headlines against ours from :attr:`Finished.model` and :attr:`Emulation.data` (either None:
        not run; ``model_why`` says why the model did not), each judged by
        :func:`dcnlab.results.summary.verdict`. ``out``: the directory :meth:`finish` and
        :meth:`measure_alone` wrote into (None: none), for figures kept in files."""

    # -- optional -----------------------------------------------------------------------------------------------

    def configure(self, args: argparse.Namespace) -> Reproduction:
        """The reproduction as ``dcnlab reproduce <name>`` runs it with its own options (``args``, that command's;
        dcnlab's commands have options of their own): default itself. Check the options here, one
        :class:`~dcnlab.topos.errors.UserError` line, before any work."""
        return self

    def printed(self, done: Outcome, as_json: bool) -> tuple[str, int] | None:
        """What ``dcnlab reproduce <name>`` prints on stdout (``as_json``: one JSON object) and its exit status;
        None (the default): the report's table of its headlines, exit status 1 when a BMv2 check failed."""
        return None

    def summary_extra(self, model: Any, emulation: Any) -> dict[str, Any]:
        """More keys of its ``summary.json`` (e.g. the user algorithms that ran beside the paper's)."""
        return {}

    def measure_alone(self, out: Path, run: Run) -> list[Path]:
        """Work that must run with no other work beside it (timings), after every pool is shut; its files."""
        return []

    def emulate(self, out: Path, quick: bool, say: Callable[[str], None]) -> Emulation:
        """Run the BMv2 experiment (when :attr:`has_emulation`) into ``out``; ``say`` gets its progress."""
        raise NotImplementedError(f"{self.name}: no BMv2 experiment")

    def readings(self) -> dict[str, Callable[[bool, int], list[Reading]]]:
        """Per paper id, the function that measures every reading of its headlines that deviate
        (``fn(quick, workers)``, :mod:`dcnlab.results.readings`)."""
        return {}

    def sensitivity(self) -> dict[str, Callable[[], Searcher]]:
        """Per paper id, its :class:`Searcher` over the settings its text leaves open (``dcnlab reproduce
        search``)."""
        return {}

    def falsifiers(self) -> dict[str, str]:
        """Per headline (its statement, or its id ``"<paper id>: <statement>"``), its falsifier in one phrase: the
        deliberately wrong mechanism, input or model that, fed through the same pipeline and rule, must be judged
        ``deviates`` (or ``flat``); the report lists it beside the headline, and ``tests/test_falsifiers.py`` fails
        for a headline of ``reproduce all`` without one (default: none)."""
        return {}

    def headline_ids(self) -> list[str]:
        """``"<paper id>: <statement>"`` of every headline it judges (its records with nothing run)."""
        return [f"{h.seed}: {h.statement}" for h in self.headlines(None, None, None, "not run")]

    @property
    def paper_ids(self) -> tuple[str, ...]:
        return tuple(p.id for p in self.papers)


def execute(run: Callable[[Any], Any], arg: Any) -> Any:
    """``run(arg)``: what a pool or Dask worker calls for one task (:attr:`Reproduction.run_task`)."""
    return run(arg)


def write_summary(rep: Reproduction, out: Path, model: Any, emulation: Any, why: str, quick: bool,
                  model_why: str = "") -> Path:
    """``out/summary.json``: ``rep``'s headlines (:meth:`Reproduction.headlines`) with why BMv2 ran or not."""
    from dcnlab.results import summary
    from dcnlab.results.outputs import writing

    heads = rep.headlines(out, model, emulation, model_why)
    with writing(out, "--out"):
        return summary.write(out / "summary.json", rep.paper_ids, heads, emulation is not None, why,
                             mechanism=rep.name, quick=quick, **rep.summary_extra(model, emulation))


def problem(obj: Any) -> str | None:
    """Why ``obj`` cannot be a reproduction (None: it can): the registry's check of a plug-in."""
    if not isinstance(obj, Reproduction):
        return f"a {type(obj).__name__}, not an instance of dcnlab.reproduce.protocol.Reproduction"
    if not obj.name or not obj.name.replace("-", "").replace("_", "").isalnum() or obj.name[0] == "-":
        return f"its name {obj.name!r} is not a word (letters, digits, - and _)"
    if not obj.papers:
        return "it names no paper (papers = (Paper(...), ...))"
    return None
