#!/usr/bin/env python3
"""mbs.envs, the vector environments over mbs.Batch (python/mbs/envs.py): spaces, shapes and dtypes,
reset and step, next-step autoreset, seeding (the same seed gives the same trajectories bit for bit,
on 1 thread as on 2), the randomisation inside its ranges, and the same checks run by a script
outside the tree against the package `make install` puts in a prefix. The C side (the batch's
impedance and steps of a control period, allocation-free) is tests/test_batch.c's.
    python3 tests/test_envs.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("MBS_PRELOAD") and os.environ.get("LD_PRELOAD") != os.environ["MBS_PRELOAD"]:
    # a sanitized library needs its runtimes loaded first (as tests/test_python.py); Python leaks by design
    env = dict(os.environ, LD_PRELOAD=os.environ["MBS_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from pycheck import check, finish  # noqa: E402

import mbs  # noqa: E402
import mbs.envs  # noqa: E402

# What a user's script checks of an environment; run here and, copied to a scratch folder, by the
# /usr/bin/python3 of a user who ran make install (it prints "ok" or the first failure).
CHECK_SCRIPT = r'''
import sys
import numpy as np
import mbs.envs

def run(nthreads, seed, steps, task="solo-walk", n=6, max_steps=None):
    env = mbs.envs.make(task, num_envs=n, seed=seed, nthreads=nthreads, max_steps=max_steps)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs.copy()]
    for _ in range(steps):
        a = rng.uniform(-1, 1, (n, 12)).astype(np.float32)
        obs, r, te, tr, info = env.step(a)
        out += [obs.copy(), r.copy(), te.copy(), tr.copy()]
    return env, out

def same(a, b):
    return len(a) == len(b) and all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b))

def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)

for task in ("solo-walk", "solo-stand"):
    env, out = run(1, 5, 3, task)
    if env.num_envs != 6 or env.single_observation_space.shape != (49,) or env.single_action_space.shape != (12,):
        fail("%s: spaces %s %s" % (task, env.single_observation_space, env.single_action_space))
    if env.observation_space.shape != (6, 49) or env.action_space.shape != (6, 12):
        fail("%s: batched spaces" % task)
    if out[0].shape != (6, 49) or out[0].dtype != np.float32 or out[2].dtype != np.float32 or out[3].dtype != bool:
        fail("%s: obs %s %s, reward %s, terminated %s" % (task, out[0].shape, out[0].dtype, out[2].dtype, out[3].dtype))
    if not all(np.all(np.isfinite(x)) for x in out if x.dtype != bool):
        fail("%s: not finite" % task)
# autoreset, next step: truncated at step 4, then the first observation of a new episode, reward 0
env, out = run(1, 1, 6, max_steps=4)
tr4, te5, tr5, r5 = out[4 * 4], out[4 * 5 - 1], out[4 * 5], out[4 * 5 - 2]
if not tr4.all() or tr5.any() or te5.any() or np.any(r5 != 0):
    fail("autoreset: truncated at 4 %s, then %s %s reward %s" % (tr4, tr5, te5, r5))
if not np.allclose(out[4 * 5 - 3][:, 13:37], out[0][:, 13:37], atol=0.05):
    fail("autoreset: the observation after the reset is not a start's")
# seeding: same seed, same bits, on 1 and on 2 threads; another seed, another run
a, b, c = run(1, 11, 25)[1], run(2, 11, 25)[1], run(1, 12, 25)[1]
if not same(a, b):
    fail("seed 11 on 1 and 2 threads: different trajectories")
if same(a, c):
    fail("seeds 11 and 12: the same trajectories")
print("ok")
'''


def check_spaces_and_steps():
    for task in ("solo-walk", "solo-stand"):
        env = mbs.envs.make(task, num_envs=4, seed=0)
        s, a = env.single_observation_space, env.single_action_space
        check(s.shape == (49,) and s.dtype == np.float32, "%s: single observation space %s" % (task, s))
        check(a.shape == (12,) and a.dtype == np.float32 and np.all(a.low == -1) and np.all(a.high == 1),
              "%s: single action space %s" % (task, a))
        check(env.metadata["autoreset_mode"] == "NextStep", "autoreset mode %s" % env.metadata)
        obs, info = env.reset(seed=1)
        check(obs.shape == (4, 49) and obs.dtype == np.float32 and isinstance(info, dict), "%s: reset" % task)
        first = obs
        obs, r, te, tr, info = env.step(np.zeros((4, 12), np.float32))
        check(obs is first, "%s: the observations are one array, written in place" % task)
        check(r.shape == (4,) and r.dtype == np.float32 and te.dtype == bool and tr.dtype == bool,
              "%s: step's types %s %s %s" % (task, r.dtype, te.dtype, tr.dtype))
        check(np.all(np.isfinite(r)) and np.all(np.isfinite(obs)), "%s: not finite" % task)
        check(np.all(obs[:, 6:9] @ np.ones(3) != 0) and np.allclose(np.linalg.norm(obs[:, 6:9], axis=1), 1, atol=1e-5),
              "%s: gravity's direction is a unit vector" % task)
    # a standing walker holds up under the PD for 1 s without actions, its reward the alive and tracking terms
    env = mbs.envs.make("solo-walk", num_envs=4, seed=0, randomize=False)
    env.reset(seed=0)
    for _ in range(100):
        obs, r, te, tr, _ = env.step(np.zeros((4, 12), np.float32))
    check(not te.any() and np.all(obs[:, 9] > 0.18), "solo-walk: standing 1 s, base at %s" % obs[:, 9])
    check(np.all(r > 0), "solo-walk: standing earns %s" % r)
    # lying robots: on the belly (gravity along the base's −z) or a side (along ±y), the base below a
    # standing one's; finite without actions
    env = mbs.envs.make("solo-stand", num_envs=6, seed=2)
    obs, _ = env.reset(seed=2)
    g = obs[:, 6:9]
    check(np.all((g[:, 2] < -0.95) | (np.abs(g[:, 1]) > 0.95)) and np.all(obs[:, 9] < 0.2),
          "solo-stand starts lying: gravity %s, base at %s" % (g, obs[:, 9]))
    for _ in range(50):
        obs, r, te, tr, _ = env.step(np.zeros((6, 12), np.float32))
    check(np.all(np.isfinite(obs)) and np.all(np.isfinite(r)), "solo-stand after 0.5 s: not finite")


def check_randomisation():
    R = mbs.envs.RANDOMIZATION
    env = mbs.envs.make("solo-walk", num_envs=64, seed=3, max_steps=2)
    env.reset(seed=3)
    mats, strengths, pushes = [], [], []
    for k in range(12):   # resets every third step
        env.step(np.zeros((64, 12), np.float32))
        mats.append(env.material.copy())
        strengths.append(env._strength.copy())
        pushes.append(np.linalg.norm(env._push_force, axis=1))
    mats, strengths, pushes = np.array(mats), np.array(strengths), np.array(pushes)
    mu, K, B = mats[..., 0], mats[..., 1], mats[..., 2]
    check(np.all((mu >= R["friction"][0]) & (mu <= R["friction"][1])), "friction out of its range")
    check(np.all((K >= R["stiffness"][0]) & (K <= R["stiffness"][1])), "stiffness out of its range")
    check(np.all((B >= R["damping_ratio"][0] * K) & (B <= R["damping_ratio"][1] * K)), "damping out of its range")
    check(np.all((strengths >= R["motor_strength"][0]) & (strengths <= R["motor_strength"][1])), "motor strength")
    check(np.all(pushes <= R["push_force"][1] + 1e-12), "push above %g N: %g" % (R["push_force"][1], pushes.max()))
    check(mu[0].std() > 0.1 and len(np.unique(mats[:, 0, 0])) > 2, "friction drawn per environment and per reset")
    m = env.added_mass
    check(np.all((m >= R["added_mass"][0]) & (m <= R["added_mass"][1])) and m.std() > 0.05, "added mass %s" % m[:4])
    # each environment's model carries its own base mass: a heavier robot sinks deeper on the same ground
    env = mbs.envs.make("solo-walk", num_envs=2, seed=0, ranges={"added_mass": (0.0, 0.0)})
    light = mbs.envs.make("solo-walk", num_envs=2, seed=0, ranges={"added_mass": (2.0, 2.0),
                          "push_force": (0.0, 0.0)})
    for e in (env, light):
        e.ranges.update(friction=(1, 1), stiffness=(1e5, 1e5), damping_ratio=(3e-3, 3e-3), motor_strength=(1, 1),
                        push_force=(0.0, 0.0))
        e.reset(seed=0)
        for _ in range(50):
            obs, *_ = e.step(np.zeros((2, 12), np.float32))
    check(light._q[0, 2] < env._q[0, 2] - 0.005, "2 kg on the base: base at %g, without %g" % (light._q[0, 2], env._q[0, 2]))
    # randomize=False: the scenario's ground
    env = mbs.envs.make("solo-walk", num_envs=2, seed=0, randomize=False)
    env.reset()
    check(np.allclose(env.material, [1.0, 1e5, 300.0]) and np.all(env.added_mass == 0), "nominal: %s" % env.material[0])


def check_script_here():
    """The user's script against the tree's package."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    with tempfile.TemporaryDirectory(prefix="mbs_envs_") as tmp:
        path = os.path.join(tmp, "check_env.py")
        open(path, "w").write(CHECK_SCRIPT)
        r = subprocess.run(["/usr/bin/python3", path], cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0 and r.stdout.strip().endswith("ok"), "the check script in the tree: %s %s" %
          (r.stdout[-400:], r.stderr[-600:]))


def check_script_installed():
    """make install PREFIX=<scratch>, then the script from another folder with PYTHONPATH at the installed
    package only (no MBS_LIBRARY, no source tree): the package, the library and the data it installed."""
    tmp = tempfile.mkdtemp(prefix="mbs_envs_install_")
    try:
        prefix = os.path.join(tmp, "prefix")
        env = {k: v for k, v in os.environ.items() if k not in ("MBS_LIBRARY", "PYTHONPATH", "MBS_DATA")}
        env.update(OPENBLAS_NUM_THREADS="1")
        r = subprocess.run(["make", "-C", ROOT, "install", "PREFIX=" + prefix], env=env, capture_output=True,
                           text=True, timeout=900)
        if not check(r.returncode == 0, "make install: %s" % r.stderr[-600:]):
            return
        pkg = [d for d, _, fs in os.walk(prefix) if os.path.basename(d) == "mbs" and "envs.py" in fs]
        if not check(len(pkg) == 1, "installed mbs/envs.py: %s" % pkg):
            return
        if os.environ.get("MBS_PRELOAD"):
            env.update(LD_PRELOAD=os.environ["MBS_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
        env["PYTHONPATH"] = os.path.dirname(pkg[0])
        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(elsewhere)
        path = os.path.join(elsewhere, "check_env.py")
        open(path, "w").write(CHECK_SCRIPT + "\nprint(mbs.envs.__file__)\nprint(mbs.envs.data_dir())\n")
        r = subprocess.run(["/usr/bin/python3", path], cwd=elsewhere, env=env, capture_output=True, text=True,
                           timeout=600)
        lines = r.stdout.strip().split("\n")
        check(r.returncode == 0 and len(lines) >= 3 and lines[-3] == "ok", "the check script after make install: %s %s"
              % (r.stdout[-400:], r.stderr[-600:]))
        real = os.path.realpath(prefix)
        check(len(lines) >= 2 and os.path.realpath(lines[-2]).startswith(real) and
              os.path.realpath(lines[-1]).startswith(real), "not the installed package and data: %s" % lines[-2:])
        r = subprocess.run(["make", "-C", ROOT, "uninstall", "PREFIX=" + prefix], env=env, capture_output=True,
                           text=True, timeout=300)
        left = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs] if os.path.isdir(prefix) else []
        check(r.returncode == 0 and not left, "make uninstall left %s" % left[:5])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_observation_and_commands():
    """env.observation() of a state is what step() returned for it; the command ranges hold."""
    ranges = {"command_x": (0.2, 0.3), "command_y": (0.0, 0.0), "command_yaw": (-0.1, 0.1)}
    env = mbs.envs.make("solo-walk", num_envs=5, seed=3, ranges=ranges)
    obs, _ = env.reset(seed=3)
    a = np.random.default_rng(3).uniform(-1, 1, (5, 12))
    obs, *_ = env.step(a)
    mine = env.observation(env._q, env._v, env._command, env._action)
    check(np.array_equal(mine, obs), "observation() of the state differs from step()'s by %g" % np.abs(mine - obs).max())
    c = env._command
    check(np.all((c[:, 0] >= 0.2) & (c[:, 0] <= 0.3) & (c[:, 1] == 0) & (np.abs(c[:, 2]) <= 0.1)),
          "commands outside their ranges: %s" % c)


def check_simulate_control():
    """mbs.simulate's control callable runs at every controller period with the state, and the PD it
    hands over holds Solo up where no PD lets it fall."""
    ini = os.path.join(ROOT, "scenarios", "solo_trot.ini")
    over = {"controller.type": "none", "controller.dt": 0.01, "run.duration": 0.5}
    times = []

    def hold(t, q, v, tau, system):
        times.append(t)
        kp, kd = np.zeros(18), np.zeros(18)
        kp[6:], kd[6:] = 6.0, 0.2
        if len(times) == 1:
            hold.q0 = q.copy()
        system.set_impedance(kp, kd, hold.q0)
    held, _ = mbs.simulate(ini, over, control=hold)
    limp, _ = mbs.simulate(ini, over, control=lambda t, q, v, tau, system: None)
    check(len(times) == 50 and abs(times[1] - times[0] - 0.01) < 1e-12, "control called %d times" % len(times))
    check(held["base_z_min_m"] > 0.2 and limp["base_z_min_m"] < 0.15,
          "held by its PD the base stays at %.3f m; limp it falls to %.3f m" % (held["base_z_min_m"], limp["base_z_min_m"]))

    def boom(t, q, v, tau, system):
        raise KeyError("from the controller")
    try:
        mbs.simulate(ini, over, control=boom)
        check(False, "an exception in control was lost")
    except KeyError:
        pass


def check_training_example():
    """examples/train_walk.py: two iterations of random search on 4 environments and the playback of the
    policy they gave run to the end (the 30-minute training is the docs' command, not a test)."""
    tmp = tempfile.mkdtemp(prefix="mbs_train_")
    try:
        pol, page = os.path.join(tmp, "p.npz"), os.path.join(tmp, "walk.html")
        ex = os.path.join(ROOT, "examples", "train_walk.py")
        r = subprocess.run([sys.executable, ex, "--iterations", "2", "--directions", "2", "--top", "1", "--horizon", "0.3",
                            "--report", "1", "--out", pol], capture_output=True, text=True, timeout=600)
        check(r.returncode == 0 and "trained 2 iterations" in r.stdout, "training: %s %s" % (r.stdout[-300:], r.stderr[-300:]))
        r = subprocess.run([sys.executable, ex, "--play", pol, "--eval-envs", "2", "--html", page], capture_output=True,
                           text=True, timeout=600)
        check(r.returncode == 0 and "held-out seeds" in r.stdout and os.path.getsize(page) > 10000,
              "playback: %s %s" % (r.stdout[-300:], r.stderr[-300:]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    check_observation_and_commands()
    check_simulate_control()
    check_training_example()
    check_spaces_and_steps()
    check_randomisation()
    check_script_here()
    check_script_installed()
    finish("envs")


if __name__ == "__main__":
    main()
