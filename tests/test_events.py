#!/usr/bin/env python3
"""./sim --events: each contact point's touch-downs and lift-offs, one row each (t_s, point, event).
On Romeo's walk (expo at 5 ms, which splits its steps at contact events): the touch-down rows are
the summary's touchdowns and, a foot being the points on one frame, its foot_touchdowns; each
point's events alternate, the times rise within the run and some fall between steps (sub-steps);
the points are named as the trajectory CSV's columns. Refused with --resume, and an unwritable
file is an error that names it, before the run.
MBS_SIM names the ./sim to run.

    MBS_SIM=./sim python3 tests/test_events.py
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, finish  # noqa: E402


def summary(text):
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(": ")
        out[k] = v
    return out


def main():
    sim = os.path.abspath(os.environ.get("MBS_SIM", os.path.join(ROOT, "sim")))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    scen = os.path.join(ROOT, "scenarios", "romeo_walk.ini")
    tmp = tempfile.mkdtemp(prefix="mbs_events_")
    try:
        events, traj = os.path.join(tmp, "events.csv"), os.path.join(tmp, "traj.csv")
        run = subprocess.run([sim, scen, "--events", events, "--csv", traj, "--quiet"], env=env,
                             capture_output=True, text=True)
        check(run.returncode == 0, "romeo_walk --events exited %d: %s" % (run.returncode, run.stderr.strip()))
        s = summary(run.stdout)
        with open(events, newline="") as f:
            rows = list(csv.reader(f))
        check(rows and rows[0] == ["t_s", "point", "event"], "header %s" % (rows[:1],))
        rows = rows[1:]
        with open(traj, newline="") as f:
            header = next(csv.reader(f))
        points = [c[:-len("_active")] for c in header if c.endswith("_active")]
        check(len(points) == 8, "%d points in the trajectory's columns" % len(points))
        # the initial state: every sole corner on the ground (the first row of the trajectory)
        with open(traj, newline="") as f:
            r = csv.DictReader(f)
            first = next(r)
        touching = {p: first[p + "_active"] == "1" for p in points}
        dt, t_end = float(s["dt_s"]), float(s["sim_time_s"])
        points_down = feet_down = between = 0
        ok_names = ok_alternate = ok_rising = True
        last = 0.0
        for t_s, point, event in rows:
            t = float(t_s)
            ok_names &= point in touching
            if point not in touching:
                continue
            ok_rising &= last <= t <= t_end + 1e-9 and t > 0
            last = t
            down = event == "touchdown"
            ok_alternate &= event in ("touchdown", "liftoff") and down != touching[point]
            steps = t / dt
            between += abs(steps - round(steps)) > 1e-3
            if down:
                points_down += 1
                foot = point.rsplit("_", 1)[0]
                feet_down += not any(on for p, on in touching.items() if p.rsplit("_", 1)[0] == foot)
            touching[point] = down
        check(ok_names, "a point not among the trajectory's columns")
        check(ok_alternate, "a point's events do not alternate from its initial state")
        check(ok_rising, "event times not rising within (0, %g] s" % t_end)
        check(str(points_down) == s["touchdowns"], "%d touch-down rows, summary %s" % (points_down, s["touchdowns"]))
        check(str(feet_down) == s["foot_touchdowns"],
              "%d foot touch-downs among the rows, summary %s" % (feet_down, s["foot_touchdowns"]))
        check(between > 0, "no event between steps (dt %g s): the sub-steps were not seen" % dt)
        print("romeo_walk --events: %d rows, %d point and %d foot touch-downs, %d between steps"
              % (len(rows), points_down, feet_down, between))

        run = subprocess.run([sim, scen, "--events", events, "--resume", os.path.join(tmp, "none.ckpt")], env=env,
                             capture_output=True, text=True)
        check(run.returncode == 2 and "--events does not go with --resume" in run.stderr,
              "--events with --resume: exit %d, %s" % (run.returncode, run.stderr.strip()[:200]))
        bad = os.path.join(tmp, "no_such_dir", "events.csv")
        run = subprocess.run([sim, scen, "--events", bad, "--quiet"], env=env, capture_output=True, text=True)
        check(run.returncode == 1 and bad in run.stderr and "touchdowns" not in run.stdout,
              "unwritable --events: exit %d, %s" % (run.returncode, run.stderr.strip()[:200]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("events")


if __name__ == "__main__":
    main()
