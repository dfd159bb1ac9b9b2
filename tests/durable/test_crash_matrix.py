"""Crash matrix on SQLite: SIGKILL a run at many points, resume in a new process, compare.

The default run samples the matrix; the full matrix (every stream event and every call: 72
points) is marked `slow` and also runs in CI. The harness is crash_matrix.py next to this file:
`python tests/durable/crash_matrix.py` prints the table.
"""

from __future__ import annotations

import pytest

from tests.durable import crash_matrix


def _check(matrix, base, results, minimum):
    table = matrix.format_table(base, results)
    print(table)
    assert len(results) >= minimum
    assert all(r.killed for r in results), table
    assert all(r.ok for r in results), table
    # a call killed mid-flight never returned: it is always redone (a sibling branch's call that
    # had returned but was not yet stored may be redone too; `ok` bounds the total)
    for r in results:
        if r.point.startswith("call:"):
            assert r.extra >= r.in_flight >= 1, table


def test_crash_matrix_sqlite_sample(tmp_path):
    matrix = crash_matrix
    base, results = matrix.run_matrix("sqlite", points=10, workers=2, workdir=tmp_path)
    assert base["calls"] == 22 and base["events"] >= 20
    _check(matrix, base, results, 10)


@pytest.mark.slow
def test_crash_matrix_sqlite_full(tmp_path):
    matrix = crash_matrix
    base, results = matrix.run_matrix("sqlite", workers=2, workdir=tmp_path)
    _check(matrix, base, results, 20)
    assert len(results) == base["events"] + base["calls"]
