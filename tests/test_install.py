#!/usr/bin/env python3
"""`make install PREFIX=$HOME/.local` as a user runs it: with HOME a scratch folder, the package is
then imported by /usr/bin/python3 from another folder with no PYTHONPATH and no MBS_LIBRARY, and
loads the installed library; `make uninstall` leaves the prefix empty. The sub-make gets this make's
command-line variables (MAKEFLAGS), so it installs what `make test` built.

    python3 tests/test_install.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, finish  # noqa: E402

PROBE = """import mbs, os, sys
m = mbs.Model(sys.argv[1])
print(os.path.realpath(mbs.__file__))
print(os.path.realpath(mbs._lib._name))
print(m.nv)
"""


def main():
    tmp = tempfile.mkdtemp(prefix="mbs_install_")
    try:
        home = os.path.join(tmp, "home")
        prefix = os.path.join(home, ".local")
        elsewhere = os.path.join(tmp, "elsewhere")
        os.makedirs(elsewhere)
        env = {k: v for k, v in os.environ.items() if k not in ("MBS_LIBRARY", "PYTHONPATH", "PYTHONUSERBASE")}
        env.update(HOME=home, OPENBLAS_NUM_THREADS="1")
        r = subprocess.run(["make", "-C", ROOT, "install", "PREFIX=" + prefix], env=env, capture_output=True,
                           text=True, timeout=900)
        check(r.returncode == 0, "make install exited %d: %s" % (r.returncode, r.stderr[-600:]))
        if os.environ.get("MBS_PRELOAD"):
            # a sanitized library needs its runtimes loaded first; Python itself leaks by design
            env.update(LD_PRELOAD=os.environ["MBS_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
        r = subprocess.run(["/usr/bin/python3", "-c", PROBE, os.path.join(ROOT, "urdf", "solo12.urdf")],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
        out = r.stdout.split("\n")
        check(r.returncode == 0, "import mbs after make install PREFIX=$HOME/.local: %s" % r.stderr.strip()[-600:])
        real = os.path.realpath(prefix) + "/"
        check(len(out) > 2 and out[0].startswith(real) and out[1].startswith(real + "lib/libmbs.so"),
              "mbs imported from %s, library %s: not the installed ones" % (out[0], out[1] if len(out) > 1 else ""))
        check(len(out) > 2 and out[2] == "18", "the installed package's solo12 has nv %s, want 18" % out[2:3])
        r = subprocess.run(["make", "-C", ROOT, "uninstall", "PREFIX=" + prefix], env=env, capture_output=True,
                           text=True, timeout=300)
        left = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs + _] if os.path.isdir(prefix) else []
        check(r.returncode == 0 and not left, "make uninstall exited %d, left %s" % (r.returncode, left[:5]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("install")


if __name__ == "__main__":
    main()
