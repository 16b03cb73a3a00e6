#!/usr/bin/env python3
"""./sim's messages on bad input, as a user sees them: a directory given as the scenario, as the model
of --info or as a scenario's [model] urdf is named as a directory (exit 1), not "read error".
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
    finish("cli")


if __name__ == "__main__":
    main()
