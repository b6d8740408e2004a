"""Score generation (the proxy problem): the vectorised trials equal a plain strict-list simulation,
a hand-computed case, scores sum to 1 per tuple, same seed -> same bytes whatever the workers."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cli import main
from schedlab.schedulers.policy_scores import Tuple, simulate_list, trial_bslds, tuple_scores


def reference_bsld(p, q, r, m, k, order):
    starts, free = simulate_list(p, q, r, m, range(k))
    queue_starts, _ = simulate_list(p, q, r, m, order, free, starts[-1] if starts else 0.0)
    return np.mean([max((s - r[j] + p[j]) / max(p[j], 10.0), 1.0) for s, j in zip(queue_starts, order, strict=True)])


def test_strict_list_by_hand():
    """m = 4. S: a (4 procs, 100 s) at r = 0. Q in order c, b: c (1 proc, 10 s, r = 5) waits for a,
    starts at 100; b (3 procs, 50 s, r = 1) starts at 100 too (3 procs left). bsld c = (95 + 10)/10,
    b = (99 + 50)/50. Order b, c: b at 100, then c at 100 as well."""
    p, q, r = np.array([100.0, 50.0, 10.0]), np.array([4, 3, 1]), np.array([0.0, 1.0, 5.0])
    starts, free = simulate_list(p, q, r, 4, [0])
    assert starts == [0.0] and free == [100.0] * 4
    bslds = trial_bslds(p[1:], q[1:], r[1:], np.array([[1, 0], [0, 1]]), free, 0.0)
    assert np.allclose(bslds, [((95 + 10) / 10 + (99 + 50) / 50) / 2] * 2)
    strict = trial_bslds(np.array([50.0, 10.0]), np.array([4, 1]), np.array([1.0, 5.0]), np.array([[1, 0]]),
                         [0.0] * 4, 0.0)  # c first at 5, then b (4 procs) waits for c: 15
    assert np.allclose(strict, [(1.0 + (14 + 50) / 50) / 2])


@st.composite
def tuples(draw):
    m = draw(st.sampled_from([1, 2, 3, 8, 40]))
    n = draw(st.integers(2, 9))
    k = draw(st.integers(1, 6))
    p = np.array([draw(st.integers(1, 500)) for _ in range(k + n)], dtype=float)
    q = np.array([draw(st.integers(1, m)) for _ in range(k + n)])
    r = np.cumsum([draw(st.integers(0, 100)) for _ in range(k + n)]).astype(float)
    return m, k, p, q, r, draw(st.integers(0, 2**31 - 1))


def test_scores_do_not_depend_on_trial_order_or_chunks_and_a_tiny_job_scores_lowest():
    rng = np.random.default_rng(3)
    p = rng.integers(600, 20_000, 48).astype(float)
    q = rng.integers(8, 64, 48)
    r = np.cumsum(rng.integers(0, 300, 48)).astype(float)
    p[20], q[20] = 1.0, 1  # far smaller than all others: running it first delays nobody much
    k = 16
    starts, free = simulate_list(p, q, r, 256, range(k))
    perms = np.argsort(rng.random((500, 32)), axis=1)
    shuffled = rng.permutation(500)
    bslds = trial_bslds(p[k:], q[k:], r[k:], perms, free, starts[-1])
    assert np.array_equal(trial_bslds(p[k:], q[k:], r[k:], perms[shuffled], free, starts[-1]), bslds[shuffled])
    scores = tuple_scores(Tuple(p, q, r, k), 256, 3_000, 5)
    assert np.allclose(tuple_scores(Tuple(p, q, r, k), 256, 3_000, 5, chunk=7), scores, rtol=1e-12)
    assert np.argmin(scores) == 20 - k and abs(scores.sum() - 1) < 1e-12


@settings(max_examples=60, deadline=None)
@given(case=tuples())
def test_vectorised_trials_equal_the_reference(case):
    m, k, p, q, r, seed = case
    n = len(p) - k
    perms = np.argsort(np.random.default_rng(seed).random((12, n)), axis=1)
    starts, free = simulate_list(p, q, r, m, range(k))
    fast = trial_bslds(p[k:], q[k:], r[k:], perms, free, starts[-1])
    slow = [reference_bsld(p, q, r, m, k, [k + j for j in perm]) for perm in perms]
    assert np.allclose(fast, slow, rtol=1e-12)
    scores = tuple_scores(Tuple(p, q, r, k), m, 50, seed, chunk=16)
    assert abs(scores.sum() - 1.0) < 1e-12 and len(scores) == n


def test_scores_cli_same_seed_same_bytes_and_one_line_errors(tmp_path, capsys):
    lines = ["; MaxProcs: 8"] + [f"{i + 1} {30 * i} 0 {10 + 37 * i % 300} {1 + i % 5} -1 -1 {1 + i % 5} 600 "
                                 "-1 1 1 1 -1 1 -1 -1 -1" for i in range(60)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"s{workers}.csv"
        assert main(["policy", "scores", str(tmp_path / "t.swf"), "--tuples", "3", "--trials", "300",
                     "--seed", "7", "--workers", workers, "-o", str(out)]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") == 1 + 3 * 32
    metadata = json.loads((tmp_path / "s1.csv.json").read_text())
    assert metadata["processors"] == 8 and metadata["trials"] == 300 and metadata["max_sum_error"] < 1e-12
    capsys.readouterr()
    assert main(["policy", "scores", str(tmp_path / "t.swf"), "--tuples", "0", "-o", str(tmp_path / "x.csv")]) == 2
    assert main(["policy", "scores", str(tmp_path / "t.swf"), "--processors", "2", "-o", str(tmp_path / "x.csv")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and "--tuples must be >= 1" in errors[0] and "more than the machine's 2" in errors[1]
