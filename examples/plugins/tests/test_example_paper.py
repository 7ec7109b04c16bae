"""The example paper (``fattree-counts``): its counts are the ones a reader finds by hand, and a wrong count fails
the report's verdict rule. Run: ``python -m pytest examples/plugins``."""

from dcnlab.reproduce.protocol import Reproduction, Run

from dcnlab_example_plugins.paper import REPRODUCTION, count


def test_the_counts_at_k_4_are_the_ones_drawn_by_hand():
    assert count(4) == {"k": 4, "hosts": 16, "core_switches": 4, "shortest_paths": 4, "edge_disjoint_paths": 2}


def test_its_tasks_finish_and_headlines(tmp_path):
    assert isinstance(REPRODUCTION, Reproduction)
    tasks = REPRODUCTION.tasks("smoke", None)
    results = [REPRODUCTION.run_task(t.arg) for t in tasks]
    done = REPRODUCTION.finish(tmp_path, Run("smoke"), tasks, results)
    assert {f.name for f in done.files} == {"fattree.json", "fattree.png"} and all(f.is_file() for f in done.files)
    heads = REPRODUCTION.headlines(tmp_path, done.model, None)
    assert [(h.paper, h.model, h.verdict) for h in heads] == [(128, 128, "reproduced"), (16, 16, "reproduced"),
                                                              (16, 16, "reproduced"), (4, 4, "reproduced")]
    wrong = [dict(r, shortest_paths=r["shortest_paths"] - 1) for r in done.model]
    assert [h.verdict for h in REPRODUCTION.headlines(tmp_path, wrong, None)][2] == "deviates"
