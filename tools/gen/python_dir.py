#!/usr/bin/env python3
"""Prints the folder, relative to PREFIX, where `make install PREFIX=...` puts the Python package:
where this python finds packages under PREFIX.

    python3 tools/gen/python_dir.py $HOME/.local    # lib/python3.11/site-packages (Debian)
    python3 tools/gen/python_dir.py /usr/local      # lib/python3.11/dist-packages (Debian)
"""
import os
import site
import sys


def python_dir(prefix):
    prefix = os.path.abspath(prefix)
    version = "python%d.%d" % sys.version_info[:2]
    # the user's base (~/.local, or PYTHONUSERBASE) has its own scheme: site-packages on Debian
    if prefix == os.path.abspath(site.getuserbase()):
        return os.path.relpath(site.getusersitepackages(), prefix)
    found = [d for d in sys.path if d.startswith(prefix + "/lib/") and d.endswith("-packages")]
    # this version's folder before a shared one (Debian's /usr/lib/python3/dist-packages)
    found.sort(key=lambda d: version not in d)
    if found:
        return os.path.relpath(found[0], prefix)
    # a prefix python does not search: the upstream layout, for PYTHONPATH
    return os.path.join("lib", version, "site-packages")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1]:
        sys.exit("usage: python_dir.py PREFIX")
    print(python_dir(sys.argv[1]))
