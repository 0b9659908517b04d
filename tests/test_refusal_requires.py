"""The refusal conditions' `requires` (rules/refusal_conditions.py): a condition that declares
keys never holds where none of them has a value, so RowIndex may skip its row; and the index
gives, for any config, exactly the rows that hold, in table order."""

from __future__ import annotations

import itertools
from pathlib import Path

from rules.refusal_conditions import AnyOf, FromRelease, RowIndex
from rules.refusal_table import REFUSALS

_SAMPLES = (True, False, 0, 1, 3, 2.5, -1, "", "x", "qlora", "jinja", [], ["a"], ["*_proj"], {"a": 1}, "auto")


class _Config:
    """A ConfigIR's reading surface: values by key (absent: None), no pinned version."""

    path = Path("/nonexistent/axolotl.yaml")

    def __init__(self, values: dict):
        self.values = values
        self.fields = {key: _Field(value) for key, value in values.items()}

    def value(self, key, default=None):
        return self.values.get(key, default)

    def version(self, package):
        return None


class _Field:
    def __init__(self, value):
        self.value = value


def _conditions():
    stack = [condition for row in REFUSALS for condition in row.conditions]
    while stack:
        condition = stack.pop()
        yield condition
        if isinstance(condition, (AnyOf, FromRelease)):
            stack.extend(condition.conditions)


def test_a_condition_never_holds_without_one_of_the_keys_it_requires():
    checked = 0
    for condition in _conditions():
        if not condition.requires:
            continue
        others = [key for key in dict.fromkeys(condition.keys) if key not in condition.requires]
        for values in itertools.product(_SAMPLES, repeat=min(len(others), 2)):
            config = _Config(dict(zip(others, values)))
            assert not condition.holds(config), (type(condition).__name__, condition.keys, values)
            checked += 1
    assert checked > 100


def test_the_index_gives_the_rows_that_hold_in_table_order():
    index = RowIndex(REFUSALS)
    keys = sorted({key for row in REFUSALS for key in row.keys})
    for seed, key in enumerate(keys):
        for sample in _SAMPLES:
            # one key set, and a few others by a fixed pattern
            values = {key: sample, **{other: _SAMPLES[(seed + step) % len(_SAMPLES)]
                                      for step, other in enumerate(keys[seed::7][:6])}}
            config = _Config(values)
            expected = [row for row in REFUSALS if row.holds(config)]
            assert [row for row in index.candidates(config) if row.holds(config)] == expected
