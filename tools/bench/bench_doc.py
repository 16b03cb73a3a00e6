#!/usr/bin/env python3
"""bench_doc.py — puts the tables a benchmark's run wrote into docs/benchmarks.md.

A full run of a benchmark (tools/bench/bench_*.c, through tools/bench/bench_doc.h) writes <data>/tables.md:
blocks between `<!-- begin NAME: written by ... -->` and `<!-- end NAME -->`. This replaces every
block of docs/benchmarks.md that has the same NAME with the run's, so that each table of a section
comes from one run of the command the section names. A block whose body is the line `@@OUTPUT@@`
gets the run's whole output, <data>/output.txt (the Makefile's bench target tees it there), as a
code block, when that file is of the same run (it holds the run's stamp); otherwise the document's
block is left as it was and this says so.

Usage: tools/bench/bench_doc.py DATA_DIR [DOC]   (DOC defaults to docs/benchmarks.md)
Exit status 1 when a block of the run has no place in the document (add its two marker lines)."""
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
if len(sys.argv) < 2:
    sys.exit(__doc__)
data = sys.argv[1]
path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "docs", "benchmarks.md")
tables_path = os.path.join(data, "tables.md")
if not os.path.exists(tables_path):
    print("bench_doc: no %s (a --quick run writes none): docs/benchmarks.md left as it is" % tables_path)
    sys.exit(0)

block = re.compile(r"<!-- begin ([\w.-]+): ([^\n]*?)-->\n(.*?)<!-- end \1 -->\n?", re.S)
fresh = {m.group(1): m for m in block.finditer(open(tables_path, encoding="utf-8").read())}
output_path = os.path.join(data, "output.txt")
output = open(output_path, encoding="utf-8").read() if os.path.exists(output_path) else None
doc = open(path, encoding="utf-8").read()
placed, kept = [], []


def replace(m):
    name = m.group(1)
    new = fresh.get(name)
    if new is None:
        return m.group(0)
    body = new.group(3)
    if body.strip() == "@@OUTPUT@@":
        stamp = re.search(r"run ([^;]*);", new.group(2))
        if output is None or stamp is None or ("run " + stamp.group(1)) not in output:
            kept.append(name)
            return m.group(0)
        body = "```\n" + output.rstrip("\n") + "\n```\n"
    placed.append(name)
    return "<!-- begin %s: %s-->\n%s<!-- end %s -->\n" % (name, new.group(2), body, name)


doc = block.sub(replace, doc)
open(path, "w", encoding="utf-8").write(doc)
missing = [n for n in fresh if n not in placed and n not in kept]
print("bench_doc: %d block(s) of %s put into %s" % (len(placed), tables_path, os.path.relpath(path)))
for n in kept:
    print("bench_doc: %s: no output of the same run in %s, the document's block kept" % (n, output_path))
for n in missing:
    print("bench_doc: no place for block %s in %s: add the lines '<!-- begin %s: -->' and '<!-- end %s -->'"
          % (n, path, n, n))
sys.exit(1 if missing else 0)
