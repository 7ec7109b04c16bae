"""A user's plug-in runs before dcnlab's own tasks, so one that fails ends ``reproduce`` at once: ``reproduce
multicast --algo`` puts each algorithm on every pattern as tasks of their own, and by cost alone the user's first task
came 15th, after the MR4LMS-like baseline's long runs."""

from __future__ import annotations

import argparse

from dcnlab.report.reproduce_all import schedule
from dcnlab.reproduce.multicast.reproduction import REPRODUCTION
from dcnlab.reproduce.protocol import Task


def test_a_users_task_is_scheduled_before_longer_builtin_ones():
    tasks = [[Task("a", 0, 30.0), Task("b", 1, 1.0)], [Task("c", 2, 0.1, user=True), Task("d", 3, 50.0)]]
    assert schedule(tasks) == [(1, 0), (1, 1), (0, 0), (0, 1)]


def test_reproduce_multicast_runs_the_users_algorithm_first():
    mine = REPRODUCTION.configure(argparse.Namespace(algo=["boom.py:Boom"]))
    tasks = mine.tasks("quick", None)
    order = [tasks[ti] for _, ti in schedule([tasks])]
    users = [t for t in tasks if t.user]
    assert users and all(t.kind == "boom.py:Boom" for t in users)
    assert order[:len(users)] == users                     # every task of the user's algorithm before any of dcnlab's
    assert not any(t.user for t in REPRODUCTION.tasks("quick", None))
