"""Score generation (the proxy problem): the vectorised trials equal a plain strict-list simulation,
a hand-computed case, scores sum to 1 per tuple, same seed -> same bytes whatever the workers."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cli import main
from schedlab.experiments.studies.policy_scores import Tuple, simulate_list, trial_bslds, tuple_scores
from tests.helpers.data import examples


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


@settings(max_examples=examples(60), deadline=None)
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


def test_the_authors_shuffle_and_its_exact_first_place_bias():
    """The authors' loop (swap k with any position) is not uniform: the exact odds of heading a trial
    by index in Q, checked against all n^n draws for small n, and the published pattern for n = 32
    (x32: 1.00 for index 0, 1.34 for index 1, falling to 0.75 for index 31)."""
    import itertools
    from fractions import Fraction

    from schedlab.experiments.studies.policy_scores import authors_first_place_odds, authors_permutations

    for n in (1, 2, 3, 4):
        counts = [0] * n
        for draws in itertools.product(range(n), repeat=n):
            order = list(range(n))
            for k, j in enumerate(draws):
                order[k], order[j] = order[j], order[k]
            counts[order[0]] += 1
        assert authors_first_place_odds(n) == [Fraction(c, n ** n) for c in counts]
    odds = [float(x) * 32 for x in authors_first_place_odds(32)]
    assert abs(sum(odds) - 32) < 1e-12
    assert odds[0] == 1.0 and round(odds[1], 2) == 1.34 and round(odds[31], 2) == 0.75
    assert all(a > b for a, b in itertools.pairwise(odds[1:]))  # falls with the index after the first
    # the vectorised loop draws from that law; uniform permutations do not
    rng = np.random.default_rng(11)
    first = authors_permutations(rng, 200_000, 32)[:, 0]
    assert all(np.array_equal(np.sort(row), np.arange(32)) for row in authors_permutations(rng, 50, 32))
    frequency = np.bincount(first, minlength=32) / len(first) * 32
    assert np.max(np.abs(frequency - odds)) < 0.06  # 5 sigma of a share near 1/32 over 200k draws
    assert frequency[1] > 1.25 and frequency[31] < 0.85


def test_the_shuffle_is_an_option_of_the_scores_and_recorded(tmp_path):
    lines = ["; MaxProcs: 8"] + [f"{i + 1} {30 * i} 0 {10 + 37 * i % 300} {1 + i % 5} -1 -1 {1 + i % 5} 600 "
                                 "-1 1 1 1 -1 1 -1 -1 -1" for i in range(60)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    tables = {}
    for shuffle in ("uniform", "authors"):
        out = tmp_path / f"{shuffle}.csv"
        assert main(["policy", "scores", str(tmp_path / "t.swf"), "--tuples", "2", "--trials", "400", "--seed", "7",
                     "--shuffle", shuffle, "-o", str(out)]) == 0
        assert json.loads((tmp_path / f"{shuffle}.csv.json").read_text())["shuffle"] == shuffle
        tables[shuffle] = out.read_bytes()
    assert tables["uniform"] != tables["authors"]


def test_a_published_tables_tuples_are_found_in_the_trace(tmp_path):
    """reference_tuples locates each tuple of a score table (p, q, r of its queued jobs) in the
    trace: the tuples a scores run drew come back, S jobs included; a foreign table is refused."""
    import pytest

    from schedlab.errors import InputError
    from schedlab.experiments.studies.policy_scores import reference_tuples, tuples_from_trace, usable_jobs
    from schedlab.workloads.swf import read_swf

    lines = ["; MaxProcs: 8"] + [f"{i + 1} {30 * i + i * i % 7} 0 {10 + 37 * i % 300} {1 + i % 5} -1 -1 {1 + i % 5} "
                                 "600 -1 1 1 1 -1 1 -1 -1 -1" for i in range(90)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    assert main(["policy", "scores", str(tmp_path / "t.swf"), "--tuples", "5", "--trials", "50", "--seed", "2",
                 "-o", str(tmp_path / "s.csv")]) == 0
    p, q, r, _ = usable_jobs(read_swf(tmp_path / "t.swf"))
    drawn = tuples_from_trace(p, q, r, 5, 2)
    found = reference_tuples(tmp_path / "s.csv", p, q, r)
    assert len(found) == 5
    for a, b in zip(drawn, found, strict=True):
        assert np.array_equal(a.p, b.p) and np.array_equal(a.q, b.q) and np.array_equal(a.r, b.r)
    (tmp_path / "x.csv").write_text("p,q,r,score\n" + "".join(f"{7 + i},1,{i},0.03\n" for i in range(32)))
    with pytest.raises(InputError, match=r"tuple 1 .* is not in the trace"):
        reference_tuples(tmp_path / "x.csv", p, q, r)
