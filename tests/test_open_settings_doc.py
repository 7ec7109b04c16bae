"""open_settings' module docstring describes the method in force (pre-registered readings from the paper's text,
the others as sensitivity one setting at a time, counts of the pre-registered readings only), not the earlier
choice of the setting under which the most statements hold."""

from __future__ import annotations

import re

from dcnlab.results import open_settings


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_module_docstring_describes_pre_registered_readings_and_sensitivity():
    doc = _flat(open_settings.__doc__ or "")
    for phrase in ("pre-registered reading first", "fixed from the text alone before any result is seen",
                   "the simplest reading, declared as such", "one setting at a time",
                   "the headline counts are those of the pre-registered readings only", "depends on <setting>"):
        assert phrase in doc, phrase
    # the old method: a setting chosen as the one under which the most statements hold, ties by list order
    for old in ("is chosen: the one under which the most statements hold", "ties go to the reading",
                "the reproduction's defaults are the chosen setting", "the runner-up"):
        assert old not in doc, old


def test_field_docstrings_do_not_describe_a_search_choosing_values():
    src = _flat(open(open_settings.__file__, encoding="utf-8").read())
    assert "ties in the search go to earlier values" not in src
    assert "The values the search may choose" not in src
    assert "The setting the committed search chose" not in src
