#!/usr/bin/env python3
"""Parameter sweeps (./sim --sweep, ./sim-mpi): the same CSV, but for the wall-clock columns, with
--jobs 1, --jobs 2 and, where ./sim-mpi was built (Open MPI installed), `mpirun -n 2 ./sim-mpi`;
rows in combination order (the last key fastest) and equal to single runs with --set; a bad value
refused before anything runs, naming it; an interrupted sweep keeps whole rows and exits 130.
MBS_SIM names the ./sim to run; sim-mpi is looked for beside it.

    MBS_SIM=./sim python3 tests/test_sweep.py
"""
import csv
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, finish  # noqa: E402
WALL = {"wall_time_s", "us_per_step", "realtime_factor"}


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def same(a, b):
    """Equal rows but for the wall-clock columns."""
    return [{k: v for k, v in r.items() if k not in WALL} for r in a] == \
           [{k: v for k, v in r.items() if k not in WALL} for r in b]


def main():
    sim = os.path.abspath(os.environ.get("MBS_SIM", os.path.join(ROOT, "sim")))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    tmp = tempfile.mkdtemp(prefix="mbs_sweep_")
    try:
        base = [sim, "scenarios/solo_trot.ini", "--set", "run.duration=0.4", "--sweep", "stepper.dt=0.001,0.002",
                "--sweep", "contact.friction=0.6,0.8,1", "--quiet"]
        out = {}
        for jobs in (1, 2):
            path = os.path.join(tmp, "j%d.csv" % jobs)
            r = subprocess.run(base + ["--jobs", str(jobs), "--out", path], cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=600)
            check(r.returncode == 0 and r.stderr == "", "--jobs %d --quiet exited %d: %s" % (jobs, r.returncode, r.stderr))
            out[jobs] = open(path).read() if os.path.exists(path) else ""
        one, two = rows(out[1]), rows(out[2])
        check(len(one) == 6, "%d rows, want 6" % len(one))
        check(same(one, two), "--jobs 1 and --jobs 2 differ")
        header = out[1].split("\n", 1)[0].split(",")
        check(header[:2] == ["stepper.dt", "contact.friction"] and header[-2:] == ["status", "status_detail"] and "distance_m" in header,
              "header: %s" % header[:4])
        order = [(r["stepper.dt"], r["contact.friction"]) for r in one]
        check(order == [(d, f) for d in ("0.001", "0.002") for f in ("0.6", "0.8", "1")], "row order %s" % order)
        # a row is the run with those values set
        r = subprocess.run([sim, "scenarios/solo_trot.ini", "--set", "run.duration=0.4", "--set", "stepper.dt=0.002",
                            "--set", "contact.friction=0.8", "--quiet"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=600)
        single = dict(l.split(": ", 1) for l in r.stdout.strip().split("\n"))
        check(len(one) == 6 and all(one[4][k] == single[k] for k in single if k not in WALL),
              "row 4 differs from the single run: %s" % [k for k in single if len(one) == 6 and one[4].get(k) != single[k]])
        # a bad value: refused before anything runs, named
        r = subprocess.run([sim, "scenarios/solo_trot.ini", "--sweep", "stepper.dt=0.001,-1", "--quiet"], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=60)
        check(r.returncode == 1 and "stepper.dt=-1" in r.stderr and r.stdout == "",
              "bad value: exit %d, stderr %s, stdout %r" % (r.returncode, r.stderr.strip(), r.stdout[:80]))
        # MPI, where it was built
        mpi = os.path.join(os.path.dirname(sim), "sim-mpi")
        mpirun = shutil.which("mpirun")
        if os.path.exists(mpi) and mpirun:
            path = os.path.join(tmp, "mpi.csv")
            cmd = [mpirun, "--oversubscribe", "-n", "2"]
            if os.geteuid() == 0:
                cmd.insert(1, "--allow-run-as-root")
            # Open MPI's own allocations outlive MPI_Finalize: a sanitized build's leak check is off here
            mpi_env = dict(env, ASAN_OPTIONS="detect_leaks=0", OMPI_MCA_btl_vader_single_copy_mechanism="none")
            # ./sim's options, --quiet too: one parser for both programs
            r = subprocess.run(cmd + [mpi] + base[1:] + ["--out", path], cwd=ROOT, env=mpi_env, capture_output=True,
                               text=True, timeout=600)
            check(r.returncode == 0 and "sweep of" not in r.stderr,
                  "mpirun -n 2 sim-mpi --quiet exited %d: %s" % (r.returncode, r.stderr[-400:]))
            text = open(path).read() if os.path.exists(path) else ""
            check(text.split("\n", 1)[0] == out[1].split("\n", 1)[0] and same(rows(text), one),
                  "sim-mpi's CSV differs from --jobs 1")
            r = subprocess.run(cmd + [mpi] + base[1:] + ["--jobs", "2"], cwd=ROOT, env=mpi_env, capture_output=True,
                               text=True, timeout=600)
            check(r.returncode != 0 and r.stderr.count("sim-mpi: --jobs 2: each rank runs one combination") == 1,
                  "sim-mpi --jobs 2: exit %d, stderr %s" % (r.returncode, r.stderr[-400:]))
            # --help: the usage on stdout, exit 0, as ./sim --help
            r = subprocess.run(cmd[:-2] + ["-n", "1", mpi, "--help"], cwd=ROOT, env=mpi_env, capture_output=True, text=True,
                               timeout=600)
            check(r.returncode == 0 and r.stdout.startswith("usage: mpirun -n R sim-mpi"),
                  "sim-mpi --help: exit %d, stdout %r, stderr %s" % (r.returncode, r.stdout[:80], r.stderr[-200:]))
        else:
            print("  (no sim-mpi or mpirun: the MPI sweep is not checked here; CI installs Open MPI)")
        # interrupted: the rows finished stay, whole
        path = os.path.join(tmp, "int.csv")
        p = subprocess.Popen([sim, "scenarios/solo_trot.ini", "--set", "run.duration=5", "--sweep",
                              "stepper.dt=1e-4,1e-4,1e-4,1e-4,1.25e-4,1.25e-4,1.25e-4,1.25e-4", "--quiet", "--out",
                              path], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 300
        while time.time() < deadline and p.poll() is None:
            if os.path.exists(path) and open(path).read().count("\n") >= 2:
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=300)
        text = open(path).read() if os.path.exists(path) else ""
        kept = rows(text)
        ncol = len(text.split("\n", 1)[0].split(","))
        check(p.returncode == 130 and 1 <= len(kept) < 8 and "interrupted" in err,
              "interrupted sweep: exit %d, %d rows, stderr %s" % (p.returncode, len(kept), err.strip()))
        check(text.endswith("\n") and all(len(r) == ncol and None not in r for r in kept),
              "interrupted sweep: a row is cut")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("sweep")


if __name__ == "__main__":
    main()
