"""The Gymnasium environment (schedlab.rl) and the policy scheduler: Gymnasium's own checks, seeds,
vector environments, rewards equal to summary.json, no look-ahead, and one schedule for a policy
whether it runs through the environment, `simulate` or real Batsim (`serve`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import schedlab
import schedlab.rl
from schedlab.errors import InputError
from schedlab.model import Platform
from schedlab.platform import load_platform
from schedlab.rl.env import SchedulingEnv
from schedlab.rl.episodes import lublin as lublin_episodes
from schedlab.rl.episodes import synthetic, trace_windows
from schedlab.schedulers.agent import AgentScheduler, PolicyScheduler
from schedlab.schedulers.linear_policy import BASIS, LinearScoringPolicy
from schedlab.schedulers.observation import JOB_FEATURES, REQUESTED, UNBOUNDED, WAIT
from tests.helpers.data import REPO, TEST_DATA, examples, make_workload
from tests.helpers.invariants import scenarios

sys.path.insert(0, str(TEST_DATA))
import policies

LUBLIN256 = REPO / "platforms" / "lublin256.xml"


def lublin(**options):
    """Lublin-Feitelson episodes with walltimes twice the run times (varied requests: these tests
    compare schedules, they learn nothing)."""
    return lublin_episodes(missing_walltime="factor:2", **options)
POLICIES = TEST_DATA / "policies.py"


def play(env: SchedulingEnv, policy, seed: int | None = 0, options=None) -> tuple[list, list, dict]:
    """One episode under `policy(obs, mask)`: the (now, observation) seen, the rewards, the last info."""
    obs, info = env.reset(seed=seed, options=options)
    seen, rewards = [(info["now_s"], obs.copy())], []
    done = False
    while not done:
        obs, reward, done, truncated, info = env.step(policy(obs, info["action_mask"]))
        assert not truncated and env.observation_space.contains(obs)
        seen.append((info["now_s"], obs.copy()))
        rewards.append(reward)
    return seen, rewards, info


def jobs_csv(directory: Path) -> str:
    return (directory / "jobs.csv").read_text()


# ------------------------------------------------------------------------------------------ Gymnasium's rules
@pytest.mark.parametrize("options", [{}, {"backfill": True, "reward_mode": "step", "reward": "wait"},
                                     {"platform": str(LUBLIN256), "timing": "batsim", "reward": "utilisation"}])
def test_gymnasiums_env_checker_passes(options):
    env = SchedulingEnv(workloads=lublin(nodes=256, jobs=120), **options)
    check_env(env, skip_render_check=True)


def test_registered_and_made_by_its_id():
    env = gymnasium.make(schedlab.rl.ENV_ID, workloads=lublin(nodes=256, jobs=50), max_queue=8)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and env.action_space.n == 9 and info["action_mask"].shape == (9,)
    env.close()


def test_the_same_seed_gives_the_same_episode_and_another_seed_another():
    env = SchedulingEnv(workloads=lublin(nodes=256, jobs=200), reward_mode="step")
    first, rewards, info = play(env, policies.shortest_requested, seed=11)
    again, rewards_again, _ = play(env, policies.shortest_requested, seed=11)
    assert len(first) == len(again)
    assert all(a[0] == b[0] and np.array_equal(a[1], b[1]) for a, b in zip(first, again, strict=True))
    assert rewards == rewards_again
    _other, _, info_other = play(env, policies.shortest_requested, seed=12)
    assert info_other["metrics"] != info["metrics"]


@pytest.mark.parametrize("vector", [gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv])
def test_vector_environments_run_and_are_seeded(vector):
    def make():
        return SchedulingEnv(workloads=lublin(nodes=256, jobs=15), max_queue=8)

    runs = []
    for _ in range(2):
        envs = vector([make, make])
        obs, info = envs.reset(seed=[5, 6])
        trace, ended = [obs.copy()], np.zeros(2, int)
        for _ in range(60):  # the first allowed action of each (reset after an episode ends)
            actions = [int(np.flatnonzero(mask)[0]) for mask in info["action_mask"]]
            obs, _rewards, terminated, _truncated, info = envs.step(np.array(actions))
            trace.append(obs.copy())
            ended += terminated
            if terminated.any():
                assert all(info["_metrics"] == terminated)  # the ended episodes' metrics
        envs.close()
        assert (ended >= 2).all()  # each env went through resets
        runs.append(trace)
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=False))
    assert not np.array_equal(runs[0][0][0], runs[0][0][1])  # two seeds, two workloads


# ------------------------------------------------------------------------------------------ rewards, metrics
@pytest.mark.parametrize("reward", ["bsld", "wait", "utilisation"])
def test_rewards_add_up_to_the_metric_summary_json_gives(reward, tmp_path):
    workload = lublin(nodes=256, jobs=300)(4)
    episodic = SchedulingEnv(workloads=workload, reward=reward)
    _, rewards, info = play(episodic, policies.shortest_requested)
    stepped = SchedulingEnv(workloads=workload, reward=reward, reward_mode="step")
    _, step_rewards, _ = play(stepped, policies.shortest_requested)
    result = schedlab.simulate(256, workload, PolicyScheduler(policy=policies.shortest_requested))
    assert info["metrics"] == result.metrics  # summary.json's, for the same schedule
    name, sign = {"bsld": ("mean_bounded_slowdown", -1), "wait": ("mean_waiting_time_s", -1),
                  "utilisation": ("utilisation", 1)}[reward]
    assert rewards[-1] == sign * result.metrics[name] and not any(rewards[:-1])
    assert sum(step_rewards) == pytest.approx(rewards[-1], rel=1e-9)
    assert sum(r != 0 for r in step_rewards) > 10  # the step rewards come along the episode
    episodic.write(tmp_path / "env")
    summary = json.loads((tmp_path / "env" / "summary.json").read_text())
    assert summary["complete"]
    assert summary["metrics"]["mean_bounded_slowdown"] == result.metrics["mean_bounded_slowdown"]


# ------------------------------------------------------------------------------------------ one schedule
@pytest.mark.parametrize("timing", ["ideal", "batsim"])
@pytest.mark.parametrize("backfill", [False, True])
def test_a_fixed_policy_gives_one_jobs_csv_through_the_env_and_simulate(timing, backfill, tmp_path):
    workload = lublin(nodes=256, jobs=400)(21)
    env = SchedulingEnv(platform=str(LUBLIN256), workloads=workload, timing=timing, backfill=backfill, max_queue=16)
    play(env, policies.shortest_requested)
    env.write(tmp_path / "env")
    scheduler = PolicyScheduler(policy=policies.shortest_requested, backfill=backfill, max_queue=16)
    schedlab.simulate(load_platform(LUBLIN256), workload, scheduler, timing=timing, out=tmp_path / "simulate")
    assert jobs_csv(tmp_path / "env") == jobs_csv(tmp_path / "simulate")
    assert jobs_csv(tmp_path / "env").count("\n") == 401


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_the_head_picked_every_time_is_fcfs_and_with_backfill_easy(scenario):
    nb_res, specs = scenario
    workload = make_workload(specs)
    for backfill, reference in ((False, "fcfs"), (True, "easy")):
        env = SchedulingEnv(platform=nb_res, workloads=workload, backfill=backfill, max_queue=4)
        play(env, policies.head_or_wait)
        ours = schedlab.simulate(nb_res, workload, reference)
        assert env.metrics() == ours.metrics
        rows = [env.engine.records[job_id] for job_id in env.engine.finished]
        assert [(r.job.id, r.start_s, str(r.alloc)) for r in rows] == [
            (r.job.id, r.start_s, str(r.alloc)) for r in (ours.engine.records[j] for j in ours.engine.finished)]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), pick=st.integers(0, 1000), delay=st.integers(1, 5000))
def test_observations_never_look_ahead(scenario, pick, delay):
    """Another run time for one job changes no observation made before that job ended (under
    either run time): the environment never shows a run time."""
    nb_res, specs = scenario
    assume(specs)
    index = pick % len(specs)
    name, submit, res, old, walltime = specs[index][:5]
    changed = list(specs)
    changed[index] = (name, submit, res, delay, walltime, *specs[index][5:])
    runs = []
    for version in (specs, changed):
        env = SchedulingEnv(platform=nb_res, workloads=make_workload(version), max_queue=3, backfill=True)
        runs.append((play(env, policies.shortest_requested)[0], env))
    (first, env1), (second, _env2) = runs
    record = next(r for r in env1.engine.records.values() if r.job.name == name)
    if record.start_s is None:
        return  # rejected: it never ran
    cut = record.start_s + min(old, delay, walltime if walltime is not None else np.inf)
    def before(seen):
        return [(now, obs.tobytes()) for now, obs in seen if now < cut]

    assert before(first) == before(second)


# ------------------------------------------------------------------------------------------ the observation
def test_the_observation_shows_what_it_says():
    jobs = [("a", 0, 4, 100, 300, {"user": "u1"}), ("b", 0, 2, 50, 200, {"user": "u1"}),
            ("c", 10, 4, 80, 1000, {"user": "u2"}), ("d", 20, 1, 10, 60, {"user": "u1"})]
    env = SchedulingEnv(platform=4, workloads=make_workload(jobs), max_queue=3, horizons_s="100,400",
                        time_scale_s=100.0, day_start_s=21600.0)
    layout = env.scheduler.layout
    names = layout.names()
    assert len(names) == layout.size == env.observation_space.shape[0] == 3 * len(JOB_FEATURES) + 1 + 2 + 2 + 2
    obs, info = env.reset(seed=0)
    values = dict(zip(names, obs.tolist(), strict=False))
    assert values["job0.present"] == 1 and values["job0.res"] == 1.0 and values["job0.requested_time"] == 3.0
    assert values["job1.res"] == 0.5 and values["job2.present"] == 0 and values["free_now"] == 1.0
    assert values["day_sin"] == pytest.approx(1.0)  # 6 h after midnight
    assert list(info["action_mask"]) == [1, 1, 0, 1]
    obs, _, _, _, info = env.step(1)  # b starts: a no longer fits, nor c at t=10; d fits at t=20
    values = dict(zip(names, obs.tolist(), strict=False))
    assert info["now_s"] == 20 and values["job0.wait"] == pytest.approx(0.2)  # a waited 20 s
    assert list(info["action_mask"]) == [0, 0, 1, 1]
    assert values["free_now"] == 0.5 and values["free_at_100s"] == 0.5 and values["free_at_400s"] == 1.0
    assert values["job0.user_running_jobs"] == 1 and values["job1.user_running_jobs"] == 0  # b is u1's
    assert values["queued_jobs"] == 3 and values["running_jobs"] == 1 and values["job2.fits_now"] == 1


def test_user_history_comes_from_jobs_that_ended():
    jobs = [("a", 0, 1, 100, 1000, {"user": "u"}), ("b", 0, 1, 300, 1000, {"user": "u"}),
            ("c", 400, 1, 10, 5000, {"user": "u"}), ("d", 400, 1, 10, 5000, {"user": "u"})]
    env = SchedulingEnv(platform=1, workloads=make_workload(jobs), max_queue=2, time_scale_s=1.0)
    obs, _info = env.reset(seed=0)
    rows = obs[:2 * len(JOB_FEATURES)].reshape(2, len(JOB_FEATURES))
    assert rows[0][JOB_FEATURES.index("user_last2_runtime")] == 1000  # nothing ended: the request
    obs, *_ = env.step(0)  # a runs 100 s
    rows = obs[:2 * len(JOB_FEATURES)].reshape(2, len(JOB_FEATURES))
    assert rows[0][JOB_FEATURES.index("user_last2_runtime")] == 100
    obs, *_ = env.step(0)  # b runs to 400, when c and d arrive
    rows = obs[:2 * len(JOB_FEATURES)].reshape(2, len(JOB_FEATURES))
    assert rows[0][JOB_FEATURES.index("user_last2_runtime")] == 200 and rows[0][WAIT] == 0


# ------------------------------------------------------------------------------------------ actions
def test_invalid_actions_raise_or_wait_as_asked():
    jobs = [("a", 0, 2, 100, 300), ("b", 0, 2, 50, 200), ("c", 0, 1, 10, 20)]
    strict = SchedulingEnv(platform=2, workloads=make_workload(jobs), max_queue=3, invalid_action="raise")
    strict.reset(seed=0)
    strict.step(0)
    with pytest.raises(ValueError, match=r"action 2 is not allowed now \(t=100.0\): the mask allows \[0, 1\] \(3 wai"):
        strict.step(2)  # at t=100 (a ended) b and c wait: there is no third job
    lenient = SchedulingEnv(platform=2, workloads=make_workload(jobs), max_queue=3)
    _, _, info = play(lenient, lambda obs, mask: 2)  # job 2 or wait: whatever the mask says, it runs to its end
    assert info["metrics"]["nb_jobs_ran"] == 3


def test_waiting_is_refused_when_nothing_could_happen_any_more():
    env = SchedulingEnv(platform=4, workloads=make_workload([("a", 0, 1, 10, 20)]), max_queue=2)
    _, info = env.reset(seed=0)
    assert list(info["action_mask"]) == [1, 0, 0]  # nothing runs, every job is submitted: waiting never ends
    _, _, done, _, _ = env.step(2)  # lenient: a wait refused starts the first allowed job
    assert done


# ------------------------------------------------------------------------------------------ the policy scheduler
def test_a_linear_policy_file_runs_as_a_scheduler_and_checks_its_settings(tmp_path):
    weights = np.zeros(len(BASIS))
    weights[BASIS.index("log_requested_s")] = -1.0  # shortest requested first
    settings = AgentScheduler(max_queue=8, backfill=True).observation_settings()
    policy = LinearScoringPolicy(weights, settings=settings, card={"trained": "by hand"})
    path = policy.save(tmp_path / "p.json")
    workload = lublin(nodes=256, jobs=300)(2)
    ours = schedlab.simulate(256, workload, "policy", options={"policy": str(path), "max_queue": "8",
                                                               "backfill": "true"})
    by_function = schedlab.simulate(256, workload, PolicyScheduler(policy=policies.shortest_requested, max_queue=8,
                                                                   backfill=True))
    assert ours.metrics == by_function.metrics
    with pytest.raises(InputError, match=r"trained with max_queue=8, backfill=True: give these options"):
        schedlab.simulate(256, workload, "policy", options={"policy": str(path)})
    with pytest.raises(ValueError, match=r"trained with time_scale_s=3600: give"):  # an object is checked too
        PolicyScheduler(policy=policy, max_queue=8, backfill=True, time_scale_s=60.0)
    (tmp_path / "bad.json").write_text('{"kind": "something else"}')
    with pytest.raises(InputError, match=r"bad\.json.*field 'kind'"):
        schedlab.simulate(256, workload, "policy", options={"policy": str(tmp_path / "bad.json")})
    doc = json.loads(path.read_text())
    doc["settings"]["backfill"] = "false"
    (tmp_path / "text.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"text\.json: bad policy field: settings.backfill must be true or false"):
        LinearScoringPolicy.load(tmp_path / "text.json")


def test_a_failing_policy_is_the_users_failure_in_one_line(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(lublin(nodes=256, jobs=60)(1).to_json()))
    (tmp_path / "mine.py").write_text("def wrong(obs, mask):\n    return 999\n\n"
                                      "def broken(obs, mask):\n    raise KeyError('no such column')\n")
    for name, said in (("wrong", "chose action 999 is not allowed now"),
                       ("broken", "raised KeyError: 'no such column'")):
        done = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-q", "-p", "lublin256", "-w",
                               str(workload), "-s", "policy", "-O", f"policy={tmp_path / 'mine.py'}:{name}", "-o",
                               str(tmp_path / name)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and said in done.stderr and "internal error" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_policies_of_one_argument_and_models_with_predict():
    class Model:  # Stable-Baselines3's shape: predict(obs) -> (action, state)
        def predict(self, obs):
            return np.int64(0), None

    workload = lublin(nodes=256, jobs=200)(9)
    fcfs = schedlab.simulate(256, workload, "fcfs").metrics
    head = schedlab.simulate(256, workload, PolicyScheduler(policy=lambda obs: 0, invalid_action="wait")).metrics
    model = schedlab.simulate(256, workload, PolicyScheduler(policy=Model(), invalid_action="wait")).metrics
    assert head == model
    assert fcfs == head  # a refused 0 is a wait: the head or nothing, FCFS


def test_the_command_line_runs_a_policy_and_refuses_a_bad_one_in_one_line(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(lublin(nodes=256, jobs=100)(1).to_json()))
    run = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-q", "-p", "lublin256", "-w", str(workload),
                          "-s", "policy", "-O", f"policy={POLICIES}:shortest_requested", "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    bad = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-q", "-p", "lublin256", "-w", str(workload),
                          "-s", "policy", "-O", f"policy={POLICIES}:no_such", "-o", str(tmp_path / "bad")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no_such" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad").exists()


def test_trace_windows_draw_consecutive_jobs():
    whole = make_workload([(str(i), 10 * i, 1, 5, 10) for i in range(50)])
    source = trace_windows(whole, jobs=10)
    one, again, other = source(1), source(1), source(2)
    assert one.jobs == again.jobs and len(one.jobs) == 10 and one.jobs != other.jobs
    start = whole.jobs.index(one.jobs[0])
    assert one.jobs == whole.jobs[start:start + 10]


@pytest.mark.slow
@pytest.mark.batsim
def test_a_policy_under_real_batsim_equals_the_environment(tmp_path):
    """`schedlab serve policy` beside real Batsim 4.2.1 gives the environment's jobs.csv (batsim timing)."""
    from tests.helpers.real_batsim import run_real_batsim

    workload = lublin(nodes=256, jobs=600)(33)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload.to_json()))
    for backfill in (False, True):
        env = SchedulingEnv(platform=str(LUBLIN256), workloads=workload, timing="batsim", backfill=backfill)
        play(env, policies.shortest_requested)
        env.write(tmp_path / f"env{backfill}")
        argv = ["policy", "-O", f"policy={POLICIES}:shortest_requested", "-O", f"backfill={backfill}"]
        run_real_batsim(tmp_path / f"real{backfill}", LUBLIN256, path,
                        [sys.executable, "-m", "schedlab", "serve", *argv, "--socket", "{socket}"])
        real = (tmp_path / f"real{backfill}" / "out_jobs.csv").read_text().splitlines()
        assert len(real) == 601 and real == jobs_csv(tmp_path / f"env{backfill}").splitlines()


def test_platforms_by_number_and_the_defaults():
    env = SchedulingEnv(platform=Platform.homogeneous(256))
    _obs, info = env.reset(seed=1)
    assert env.workload.nb_res == 256 and len(env.workload.jobs) == 1024 and info["action_mask"].sum() >= 1
    assert env.workload.jobs == synthetic(nb_resources=256)(env.workload.extra["generator"]["seed"]).jobs
    with pytest.raises(ValueError, match="needs a platform file"):
        SchedulingEnv(platform=16, timing="batsim")
    assert JOB_FEATURES.index("requested_time") == REQUESTED


@pytest.mark.slow
@pytest.mark.batsim
def test_the_example_trains_a_policy_that_beats_fcfs_and_runs_under_real_batsim(tmp_path):
    """examples/train_cem.py on a small budget: its policy beats FCFS on every unseen workload, and
    `schedlab serve policy -O policy=learned.json` beside real Batsim equals `simulate --timing batsim`."""
    from tests.helpers.real_batsim import run_real_batsim

    policy, report = tmp_path / "learned.json", tmp_path / "report.json"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "train_cem.py"), "-o", str(policy), "--report",
                           str(report), "--generations", "4", "--population", "10", "--train-seeds", "3",
                           "--test-seeds", "5", "--jobs", "512"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    table = json.loads(report.read_text())["table"]
    assert all(learned < fcfs for learned, fcfs in zip(table["learned"], table["FCFS"], strict=True)), table
    saved = LinearScoringPolicy.load(policy)
    assert saved.card["test"]["mean_bounded_slowdown"] == table and saved.card["train_seeds"] == [0, 1, 2]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(lublin(nodes=256, jobs=500)(2024).to_json()))
    argv = ["policy", "-O", f"policy={policy}"]
    run_real_batsim(tmp_path / "real", LUBLIN256, workload,
                    [sys.executable, "-m", "schedlab", "serve", *argv, "--socket", "{socket}"])
    ours = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-q", "-p", str(LUBLIN256), "-w",
                           str(workload), "--timing", "batsim", "-o", str(tmp_path / "ours"), "-s", *argv],
                          capture_output=True, text=True, timeout=300)
    assert ours.returncode == 0, ours.stderr
    real = (tmp_path / "real" / "out_jobs.csv").read_text().splitlines()
    assert len(real) == 501 and real == jobs_csv(tmp_path / "ours").splitlines()


@pytest.mark.slow  # about 10 s: every check on every built-in workload
def test_scheduler_check_passes_a_saved_policy(tmp_path):
    from schedlab.checker import check_scheduler
    from schedlab.schedulers.base import create_scheduler

    weights = np.zeros(len(BASIS))
    weights[BASIS.index("log_wait_s")] = 1.0
    settings = AgentScheduler(max_queue=8, backfill=True).observation_settings()
    path = LinearScoringPolicy(weights, settings=settings).save(tmp_path / "p.json")
    options = {"policy": str(path), "max_queue": "8", "backfill": "true"}
    report = check_scheduler(lambda: create_scheduler("policy", options), "policy", options=options, nb_res=8,
                             speed_sizes=(200, 400))
    assert report.ok, report.findings


def test_a_policy_runs_in_a_campaign(tmp_path):
    from schedlab.experiments import run

    campaign = {"name": "learned", "seeds": [1],
                "workloads": [{"name": "lublin", "lublin": {"nodes": 64, "jobs": 150, "mode": "typeless",
                                                              "missing_walltime": "factor:2"}}],
                "platforms": [{"name": "c64", "resources": 64}],
                "schedulers": [{"name": "policy", "options": {"policy": f"{POLICIES}:shortest_requested",
                                                               "backfill": [False, True]}},
                               {"name": "easy"}]}
    table = run(campaign, tmp_path / "out")
    assert len(table) == 3 and table["complete"].all() and set(table["nb_jobs_ran"]) == {150}
    by_arm = table.set_index(table["options"].astype(str))["mean_bounded_slowdown"]
    assert by_arm.nunique() == 3  # three arms, three schedules


@pytest.mark.slow
@pytest.mark.batsim
def test_a_policy_under_pybatsim_decides_as_under_serve(tmp_path):
    from tests.helpers.real_batsim import pybatsim_entry, run_real_batsim

    pybatsim, entry = pybatsim_entry("schedlabPolicy.py")
    path = tmp_path / "w.json"
    path.write_text(json.dumps(lublin(nodes=256, jobs=300)(5).to_json()))
    options = {"policy": f"{POLICIES}:shortest_requested", "backfill": True}
    theirs = run_real_batsim(tmp_path / "pybatsim", LUBLIN256, path,
                             [str(pybatsim), str(entry), "-t", "0", "-s", "{socket}", "-o", json.dumps(options)])
    served = run_real_batsim(tmp_path / "serve", LUBLIN256, path,
                             [sys.executable, "-m", "schedlab", "serve", "policy", "-O", f"policy={options['policy']}",
                              "-O", "backfill=true", "--socket", "{socket}"])
    # the same decisions; pybatsim's replies reach Batsim a few milliseconds apart from serve's
    ours = {r["job_id"]: float(r["starting_time"]) for r in served}
    other = {r["job_id"]: float(r["starting_time"]) for r in theirs}
    assert ours.keys() == other.keys() and len(ours) == 300 and all(abs(ours[k] - other[k]) < 0.1 for k in ours)


def test_the_env_refuses_a_model_that_would_look_ahead(tmp_path):
    (tmp_path / "m.skops").write_bytes(b"not a model")  # no card: what it was trained on is unknown
    env = SchedulingEnv(platform=16, workloads=make_workload([("a", 0, 1, 10, 20)]), model=str(tmp_path / "m.skops"))
    with pytest.raises(InputError, match=r"m\.skops: model= overlaps the simulated workload: its card"):
        env.reset(seed=0)


def test_predictions_that_are_not_numbers_give_way_to_the_request():
    class NaNModel:  # what a baseline predicts for a job without a time limit
        def predict_jobs(self, jobs):
            return np.full(len(jobs), np.nan)

    class Predicting(PolicyScheduler):
        def prepare(self):
            self._predictor = NaNModel()

    seen = []

    def record(obs, mask):
        seen.append(obs.copy())
        return policies.first_allowed(obs, mask)

    jobs = [("a", 0, 2, 10, None), ("b", 0, 2, 10, 50), ("c", 1, 1, 10, None)]
    schedlab.simulate(2, make_workload(jobs), Predicting(policy=record, max_queue=3, time_scale_s=1.0))
    space = SchedulingEnv(platform=2, max_queue=3).observation_space
    assert seen and all(np.isfinite(obs).all() and space.contains(obs) for obs in seen)
    rows = seen[0][:3 * len(JOB_FEATURES)].reshape(3, len(JOB_FEATURES))
    assert rows[0][JOB_FEATURES.index("prediction")] == UNBOUNDED and rows[1][JOB_FEATURES.index("prediction")] == 50


def test_an_engine_failure_ends_the_episode_as_a_failure_not_a_termination():
    class Breaking(SchedulingEnv):
        def _advance(self):
            if self.engine.now > 0:
                self.scheduler._queue.clear()  # a scheduler broken mid-run: jobs left undecided
            super()._advance()

    env = Breaking(platform=2, workloads=make_workload([(str(i), i, 2, 5, 10) for i in range(4)]), max_queue=2)
    env.reset(seed=0)
    with pytest.raises(Exception, match="undecided"):
        while True:
            env.step(0)
    with pytest.raises(RuntimeError, match=r"stopped on an error .*undecided.*: call reset"):
        env.step(0)
    env.reset(seed=0)
    env.close()
    with pytest.raises(RuntimeError, match="closed: call reset"):
        env.step(0)
