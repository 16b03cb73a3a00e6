#!/usr/bin/env python3
"""bench_envs.py — `make bench-envs`: environment steps per second of mbs.envs' solo-walk (one step = one
10 ms control period: the actions in, the impedance handed over, 5 expo steps of 2 ms of every
environment in one library call, the observations, rewards, terminations and autoresets in numpy) for
1024 environments on 1 and 2 threads, and MuJoCo's (tools/bench/envs_mujoco.c: mj_step of the same
robot under the same PD at the same 2 ms step, 5 steps a period, on the same threads) in the same run,
configurations taken in turn so that a load that comes and goes hits all of them alike. Each figure is
the best of REPS repetitions of PERIODS periods; the median is printed beside it. The actions are a
fixed random policy's (uniform in [−0.3, 0.3], a new draw per step), with pushes and the
randomisation on: the robots wobble, some fall and are reset, as in training.

The MuJoCo side is physics alone, in C; the mbs side is the whole environment step from Python, so
the ratio counts the environment's own overhead against mbs.

    python3 tools/bench/bench_envs.py [--mujoco build/tools/envs_mujoco] [--data DIR] [--quick]
Writes DIR/tables.md (its block envs-keys, for tools/bench/bench_doc.py) unless --quick."""
import argparse
import os
import platform
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import mbs  # noqa: E402
import mbs.envs  # noqa: E402

N = 1024


def machine():
    name, fam, model, mhz = "unknown CPU", None, None, None
    try:
        for line in open("/proc/cpuinfo"):
            if not line.strip():
                break
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip()
            if k == "model name":
                name = v
            elif k == "cpu family":
                fam = v
            elif k == "model":
                model = v
            elif k == "cpu MHz":
                mhz = float(v)
    except OSError:
        pass
    clock = ", %.2f GHz" % (mhz / 1000) if mhz else ""
    return "%s (family %s model %s%s), %d CPUs, Python %s, numpy %s" % (name, fam, model, clock, os.cpu_count(),
                                                                    platform.python_version(), np.__version__)


def mbs_rate(env, periods, rng):
    actions = rng.uniform(-0.3, 0.3, (periods, N, 12)).astype(np.float32)
    t0 = time.perf_counter()
    ends = 0
    for k in range(periods):
        _, _, te, tr, _ = env.step(actions[k])
        ends += int(te.sum() + tr.sum())
    return N * periods / (time.perf_counter() - t0), ends


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mujoco", help="build/tools/envs_mujoco (MuJoCo's side); none: its figures n/a")
    ap.add_argument("--data", default=None)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    periods, reps = (5, 1) if a.quick else (30, 5)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    out = []

    def key(k, v):
        line = "%s: %s" % (k, v)
        out.append(line)
        print(line, flush=True)

    print("# make bench-envs, run %s; %s" % (stamp, machine()))
    key("load_average_start", "%.2f" % os.getloadavg()[0])
    envs = {t: mbs.envs.make("solo-walk", num_envs=N, seed=0, nthreads=t) for t in (1, 2)}
    rng = np.random.default_rng(0)
    for env in envs.values():
        env.reset(seed=0)
        mbs_rate(env, 2, rng)   # warm-up
    rates = {1: [], 2: [], "mj1": [], "mj2": []}
    mj_out = {}
    ends = 0
    for r in range(reps):
        for t in (1, 2):
            rate, e = mbs_rate(envs[t], periods, rng)
            rates[t].append(rate)
            ends += e
        if a.mujoco:
            for t in (1, 2):
                p = subprocess.run([a.mujoco, str(N), str(t), str(periods), "1"], capture_output=True, text=True,
                                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
                if p.returncode != 0:
                    sys.exit("bench_envs: %s failed: %s" % (a.mujoco, p.stderr))
                kv = dict(line.split(": ", 1) for line in p.stdout.strip().split("\n"))
                rates["mj%d" % t].append(float(kv["mujoco_env_steps_per_s_%dt" % t]))
                mj_out = kv
    best = {k: max(v) if v else float("nan") for k, v in rates.items()}
    med = {k: float(np.median(v)) if v else float("nan") for k, v in rates.items()}
    key("envs_n", N)
    key("envs_task", "solo-walk")
    key("envs_control_period_s", 0.01)
    key("envs_physics_dt_s", 0.002)
    key("env_steps_per_s_1t", "%.0f" % best[1])
    key("env_steps_per_s_2t", "%.0f" % best[2])
    key("env_steps_per_s_1t_median", "%.0f" % med[1])
    key("env_steps_per_s_2t_median", "%.0f" % med[2])
    key("env_speedup_2_threads", "%.3f" % (best[2] / best[1]))
    key("env_episode_ends", ends)
    if a.mujoco:
        key("mujoco_version", mj_out.get("mujoco_version", "n/a"))
        key("mujoco_env_steps_per_s_1t", "%.0f" % best["mj1"])
        key("mujoco_env_steps_per_s_2t", "%.0f" % best["mj2"])
        key("mujoco_env_steps_per_s_1t_median", "%.0f" % med["mj1"])
        key("mujoco_env_steps_per_s_2t_median", "%.0f" % med["mj2"])
        key("mujoco_speedup_2_threads", "%.3f" % (best["mj2"] / best["mj1"]))
        key("env_over_mujoco_1t", "%.3f" % (best[1] / best["mj1"]))
        key("env_over_mujoco_2t", "%.3f" % (best[2] / best["mj2"]))
    else:
        for k in ("mujoco_env_steps_per_s_1t", "mujoco_env_steps_per_s_2t"):
            key(k, "n/a")
    key("load_average_end", "%.2f" % os.getloadavg()[0])
    if a.quick or not a.data:
        return
    if not a.mujoco:
        print("# MuJoCo not built in: docs/benchmarks.md is not rewritten (apt-get install libmujoco-dev)")
        path = os.path.join(a.data, "tables.md")
        if os.path.exists(path):
            os.remove(path)
        return
    with open(os.path.join(a.data, "tables.md"), "w", encoding="utf-8") as f:
        f.write("<!-- begin envs-keys: written by `make bench-envs`, run %s; do not edit by hand -->\n" % stamp)
        f.write("| environments | threads | mbs solo-walk env steps/s | MuJoCo env steps/s (physics only) | mbs / MuJoCo |\n")
        f.write("|---:|---:|---:|---:|---:|\n")
        for t in (1, 2):
            f.write("| %d | %d | %.0f | %.0f | %.2f |\n" % (N, t, best[t], best["mj%d" % t], best[t] / best["mj%d" % t]))
        f.write("\nBest of %d repetitions of %d periods (medians in the keys); run %s on %s.\n\n```\n%s\n```\n"
                % (reps, periods, stamp, machine(), "\n".join(out)))
        f.write("<!-- end envs-keys -->\n")


if __name__ == "__main__":
    main()
