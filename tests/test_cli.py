#!/usr/bin/env python3
"""./sim's messages on bad input, as a user sees them: a directory given as the scenario, as the model
of --info or as a scenario's [model] urdf is named as a directory (exit 1), not "read error". A replay
page (--html) of a run as long as run.duration allows (1e7 s) is written, with fewer frames per second
said on stderr and on the page, not refused for the memory of 5e9 frames (the run is ended after 1 s
of simulated time by a small box). The man page (man/sim.1, made by `make man` from --help) keeps
each usage line on a line of its own.
MBS_SIM names the ./sim to run.

    MBS_SIM=./sim python3 tests/test_cli.py
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, finish  # noqa: E402


def main():
    sim = os.path.abspath(os.environ.get("MBS_SIM", os.path.join(ROOT, "sim")))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")

    def run(*args):
        return subprocess.run([sim] + list(args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)

    for args, want in ((["scenarios"], "sim: scenarios: it is a directory, not a scenario file"),
                       (["--info", "urdf"], "sim: urdf: it is a directory, not a URDF file"),
                       (["scenarios/solo_squat.ini", "--set", "model.urdf=../urdf"],
                        "scenarios/../urdf: it is a directory, not a URDF file")):
        r = run(*args)
        check(r.returncode == 1 and want in r.stderr and r.stdout == "",
              "sim %s: exit %d, stderr %r" % (" ".join(args), r.returncode, r.stderr.strip()))
    # man/sim.1: every usage line after the first starts after a line break (.br), so that man does
    # not run two of them together (the --checkpoint and --sweep lines once were)
    man = open(os.path.join(ROOT, "man", "sim.1")).read().split("\n")
    usage_end = next(i for i, ln in enumerate(man) if ln.startswith(".TP"))
    usage = [i for i in range(usage_end) if man[i].startswith("sim ") and not man[i].startswith("sim \\-")]
    help_usage = [ln for ln in run("--help").stdout.split("\n") if ln.startswith("       sim ")]
    check(len(usage) == len(help_usage) >= 4 and all(man[i - 1] == ".br" for i in usage),
          "man/sim.1: %d usage lines (--help has %d), not each after .br: %s" %
          (len(usage), len(help_usage), [man[i - 1:i + 1] for i in usage]))
    import re
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "long.html")
        r = run("scenarios/solo_trot.ini", "--set", "run.duration=1e7", "--set", "run.box=-1 -1 -1 0.05 1 1",
                "--html", page)
        said = re.search(r"sim: the replay page '.*long\.html' of this 1e\+07 s run shows one frame every "
                         r"([0-9.]+) s of simulated time, not every 0\.01 s: a page holds at most (\d+) frames", r.stderr)
        check(r.returncode == 4 and said is not None and "out of memory" not in r.stderr,
              "sim --html on a 1e7 s run: exit %d, stderr %r" % (r.returncode, r.stderr.strip()))
        text = open(page).read() if os.path.exists(page) else ""
        check("A long run: one frame every " in text and "so that the page holds at most" in text,
              "the page of a 1e7 s run does not say that it holds fewer frames (%d bytes)" % len(text))
        if said:
            check(int(1e7 / float(said.group(1))) + 2 <= int(said.group(2)),
                  "one frame every %s s is more than %s frames in 1e7 s" % said.groups())
    finish("cli")


if __name__ == "__main__":
    main()
