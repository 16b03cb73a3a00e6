#!/usr/bin/env python3
"""update_docs.py — puts the tables that `./sim --options-markdown` writes into docs/scenarios.md.

Each table sits in the document between a marker line `<!-- keys [SECTION]: written by ... -->`
(or `<!-- options: written by ... -->`) and `<!-- end of keys -->` (or `<!-- end of options -->`);
this replaces every such block with the program's current one. `make test` (test_options) fails
while the document and the code disagree. Usage: tools/gen/update_docs.py [path/to/sim]"""
import re, subprocess, sys, os

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "sim")
out = subprocess.run([sim, "--options-markdown"], capture_output=True, text=True, check=True).stdout
block = re.compile(r"(<!-- (?:keys \[\w+\]|options): written by[^\n]*-->\n).*?(<!-- end of (?:keys|options) -->)", re.S)
fresh = {m.group(1): m.group(0) for m in block.finditer(out)}
path = os.path.join(root, "docs", "scenarios.md")
doc = open(path, encoding="utf-8").read()
missing = [k for k in fresh if k not in doc]
doc = block.sub(lambda m: fresh.get(m.group(1), m.group(0)), doc)
open(path, "w", encoding="utf-8").write(doc)
for k in missing:
    print("update_docs: no place for " + k.strip() + " in docs/scenarios.md: add its two marker lines")
sys.exit(1 if missing else 0)
