#!/usr/bin/env python3
"""Every shell command the README shows (its ```sh blocks) runs as written and exits 0, so that a
README line cannot break unseen; so does its Python code (the ```python blocks, with PYTHONPATH=python). Scenario runs are shortened by appending `--set run.duration=0.2`
(the README's runs last up to 60 s); each command runs in a scratch folder that links the
repository's scenarios/, urdf/ and programs, so the files they write land there. Commands that a
test cannot run are skipped by SKIP below, each with its reason; any other command must be one this
test knows how to run (./sim, ./sim-mpi, mpirun), so a new kind of line gets a decision.
MBS_SIM names the ./sim to run; sim-mpi is looked for beside it.

    MBS_SIM=./sim python3 tests/test_readme_commands.py
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, finish  # noqa: E402

# (pattern at the start of a command, why the test does not run it)
SKIP = [
    (r"apt-get ", "installs Debian packages: needs the network and root, and changes the machine"),
    (r"make\b", "a make target itself (deps, the build, test, install): this test runs inside `make test`"),
    (r"cc my_controller\.c", "compiles the reader's own file, which the README only names; "
                             "`make examples` builds examples/ that way (CI)"),
    (r"(chromium|xdg-open|firefox)\b", "opens a page in a browser; tests/test_replay.py loads the page headless"),
    (r"/usr/bin/python3 examples/train_walk\.py", "trains for up to half an hour, or plays a policy back for "
                                                  "a minute; tests/test_envs.py runs two iterations and a playback"),
    (r"\./sim scenarios/go2_", "reads a third-party model from ../shared/reference beside the repository, which a "
                               "clone alone lacks; tests/test_mjcf.c runs the scenario where it is there"),
]
DURATION = "0.2"


def commands(readme):
    """The README's ```sh commands: continuation lines joined, comments dropped, `a && b` split."""
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", readme, re.S | re.M):
        text = block.replace("\\\n", " ")
        for line in text.split("\n"):
            line = re.sub(r"\s#.*$", "", line).strip()
            if line and not line.startswith("#"):
                out += [c.strip() for c in line.split("&&") if c.strip()]
    return out


def main():
    sim = os.path.abspath(os.environ.get("MBS_SIM", os.path.join(ROOT, "sim")))
    mpi = os.path.join(os.path.dirname(sim), "sim-mpi")
    have_mpi = os.path.exists(mpi) and shutil.which("mpirun")
    readme = open(os.path.join(ROOT, "README.md")).read()
    cmds = commands(readme)
    check(len(cmds) >= 15, "only %d commands found in the README's sh blocks" % len(cmds))
    # Open MPI's own allocations outlive MPI_Finalize (a sanitized build's leak check is off); shared
    # memory between ranks needs ptrace rights a container may lack
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", ASAN_OPTIONS="detect_leaks=0",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    tmp = tempfile.mkdtemp(prefix="mbs_readme_")
    try:
        for name in ("scenarios", "urdf"):
            os.symlink(os.path.join(ROOT, name), os.path.join(tmp, name))
        os.symlink(sim, os.path.join(tmp, "sim"))
        if os.path.exists(mpi):
            os.symlink(mpi, os.path.join(tmp, "sim-mpi"))
        ran = 0
        for cmd in cmds:
            why = next((w for p, w in SKIP if re.match(p, cmd)), None)
            if why is None and cmd.startswith("mpirun") and not have_mpi:
                why = "no sim-mpi or mpirun here (Open MPI not installed); CI installs it"
            if why:
                print("  skipped: %s  (%s)" % (cmd, why))
                continue
            known = re.match(r"(\./sim|\./sim-mpi|mpirun)\b", cmd)
            if not check(known, "README command this test does not know how to run: %s (run it here or add it "
                                "to SKIP with a reason)" % cmd):
                continue
            run = cmd + (" --set run.duration=" + DURATION if re.search(r"scenarios/\S+\.ini", cmd) else "")
            written = re.findall(r"--(?:csv|html|events|out) (\S+)", cmd)
            for f in written:
                if os.path.exists(os.path.join(tmp, f)):
                    os.remove(os.path.join(tmp, f))
            r = subprocess.run(run, shell=True, cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
            print("  ran: %s  (exit %d)" % (run, r.returncode))
            check(r.returncode == 0, "`%s` exited %d: %s" % (run, r.returncode, r.stderr.strip()[-600:]))
            for f in written:
                path = os.path.join(tmp, f)
                check(f == "-" or (os.path.exists(path) and os.path.getsize(path) > 0),
                      "`%s` did not write %s" % (run, f))
            ran += 1
        check(ran >= 14, "only %d README commands ran" % ran)
        pyenv = dict(env, PYTHONPATH=os.path.join(ROOT, "python"))
        if os.environ.get("MBS_PRELOAD"):
            # a sanitized library needs its runtimes loaded first; Python itself leaks by design
            pyenv["LD_PRELOAD"] = os.environ["MBS_PRELOAD"]
        blocks = re.findall(r"^```python\n(.*?)^```", readme, re.S | re.M)
        check(blocks, "no ```python block in the README")
        for code in blocks:
            r = subprocess.run(["/usr/bin/python3", "-c", code], cwd=tmp, env=pyenv, capture_output=True, text=True,
                               timeout=900)
            check(r.returncode == 0, "the README's Python block exited %d: %s" % (r.returncode, r.stderr.strip()[-800:]))
            print("  ran the README's Python block (exit %d)" % r.returncode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("readme_commands")


if __name__ == "__main__":
    main()
