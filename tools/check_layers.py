#!/usr/bin/env python3
"""check_layers.py — fails when a file of src/ includes a header of a layer above its own.

The library's layers, bottom to top, are the folders of src/ in LAYERS. A file may include:
  - headers of its own folder;
  - the public header of its own layer or of a layer below (include/mbs/<name>.h, see PUBLIC);
  - the one internal header of a layer below (<folder>/<folder>_internal.h, or base/base.h and
    spatial/spatial.h, whose folders hold nothing else).
Never the umbrella mbs.h, never another folder's private header. Also fails on an include
circle among the headers of one folder, and on a public prototype without its comment. With
--symbols LIB, checks the names libmbs.a exports (public mbs_ ones declared in include/mbs/,
internal ones mbsi_); with --dynamic-symbols SO, that libmbs.so exports the public ones only. Run by `make test`; prints every violation."""
import os, re, sys

LAYERS = ["base", "qp", "ess", "spatial", "model", "liegroup", "dynamics", "contact", "step", "control", "batch", "sim"]
PUBLIC = {"version.h": "base", "error.h": "base", "options.h": "base", "qp.h": "qp", "model.h": "model", "liegroup.h": "liegroup",
          "dynamics.h": "dynamics", "contact.h": "contact", "step.h": "step", "ess.h": "ess",
          "variational.h": "step", "control.h": "control", "ilqr.h": "control", "batch.h": "batch", "sim.h": "sim"}
EXPORTED = {"base": "base.h", "spatial": "spatial.h"}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rank(layer):
    return LAYERS.index(layer)


def main(root):
    src = os.path.join(root, "src")
    bad, graph = [], {}
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for d in folders:
        if d not in LAYERS:
            bad.append("src/%s/: a folder that is no layer (add it to LAYERS in tools/check_layers.py)" % d)
    for f in sorted(os.listdir(src)):
        if os.path.isfile(os.path.join(src, f)):
            bad.append("src/%s: a file outside the layer folders" % f)
    for d in folders:
        if d not in LAYERS:
            continue
        for f in sorted(os.listdir(os.path.join(src, d))):
            if not f.endswith((".c", ".h")):
                continue
            path = "src/%s/%s" % (d, f)
            text = open(os.path.join(root, path), encoding="utf-8").read()
            for inc in INC.findall(text):
                if inc.startswith("mbs/"):
                    name = inc[4:]
                    if name not in PUBLIC:
                        bad.append("%s: includes %s, which is no layer's public header" % (path, inc))
                    elif rank(PUBLIC[name]) > rank(d):
                        bad.append("%s: includes %s of layer '%s', above '%s'" % (path, inc, PUBLIC[name], d))
                    continue
                if inc in ("mbs.h",) or inc.endswith("/mbs.h"):
                    bad.append("%s: includes the umbrella mbs.h (include the layers' headers)" % path)
                    continue
                parts = os.path.normpath(os.path.join(d, inc)).split(os.sep)
                if len(parts) != 2 or parts[0] not in LAYERS:
                    bad.append("%s: includes \"%s\", outside the layer folders" % (path, inc))
                    continue
                layer, header = parts
                if layer == d:
                    graph.setdefault(path, []).append("src/%s/%s" % (layer, header))
                    continue
                if rank(layer) > rank(d):
                    bad.append("%s: includes %s of layer '%s', above '%s'" % (path, inc, layer, d))
                elif header != EXPORTED.get(layer, layer + "_internal.h"):
                    bad.append("%s: includes %s, a private header of '%s' (only %s is shared)"
                               % (path, inc, layer, EXPORTED.get(layer, layer + "_internal.h")))
    # the public headers: each includes only public headers of its layer or below
    pub = os.path.join(root, "include", "mbs")
    for f in sorted(os.listdir(pub)):
        if f not in PUBLIC:
            bad.append("include/mbs/%s: a public header of no layer (add it to PUBLIC)" % f)
            continue
        for inc in INC.findall(open(os.path.join(pub, f), encoding="utf-8").read()):
            name = inc[4:] if inc.startswith("mbs/") else inc
            if name not in PUBLIC:
                bad.append("include/mbs/%s: includes \"%s\", no layer's public header" % (f, inc))
            elif rank(PUBLIC[name]) > rank(PUBLIC[f]):
                bad.append("include/mbs/%s: includes %s of layer '%s', above '%s'" % (f, inc, PUBLIC[name], PUBLIC[f]))
    # every public prototype says what it does: a comment ending on the line above it, or one
    # at the end of its own last line
    proto = re.compile(r"^(?:const )?(?:struct )?[a-z_]\w*[\s*]+(mbs_\w+)\(")
    for f in sorted(os.listdir(pub)):
        lines = open(os.path.join(pub, f), encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            m = proto.match(lines[i])
            if m and not lines[i].startswith(("typedef", "static")):
                above = lines[i - 1].rstrip().endswith("*/") if i else False
                j = i
                while j < len(lines) and ";" not in lines[j]:
                    j += 1
                own = j < len(lines) and "/*" in lines[j].split(";", 1)[1] if j < len(lines) else False
                if not (above or own):
                    bad.append("include/mbs/%s:%d: %s has no comment saying what it does" % (f, i + 1, m.group(1)))
                i = j
            i += 1
    # include circles within a folder
    state = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                bad.append("include circle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif not state.get(nxt):
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])
    for b in bad:
        print("check_layers: " + b)
    print("check_layers: %d violation%s" % (len(bad), "" if len(bad) == 1 else "s"))
    return 1 if bad else 0


def check_symbols(root, symbols, shared=False):
    """Exported names: the public ones (mbs_) are declared in include/mbs/, the library's internal
    ones carry mbsi_, and nothing else leaks out of libmbs.a; with shared (the dynamic symbols of
    libmbs.so), not even the mbsi_ ones: the shared library exports its interface only."""
    public = set()
    for f in os.listdir(os.path.join(root, "include", "mbs")):
        public |= set(re.findall(r"\bmbs_\w+", open(os.path.join(root, "include", "mbs", f), encoding="utf-8").read()))
    bad = []
    for name in sorted(set(symbols)):
        if shared and name.startswith("mbsi_"):
            bad.append("libmbs.so exports the internal '%s': only what include/mbs/*.h declares may be visible "
                       "(the library builds with -fvisibility=hidden)" % name)
            continue
        if name.startswith("__") or name.startswith("mbsi_"):   # the sanitizers' own (__odr_asan.*)
            continue
        if not name.startswith("mbs_"):
            bad.append("libmbs.a exports '%s': give it the mbs_ (public) or mbsi_ (internal) prefix, or make it static" % name)
        elif name not in public:
            bad.append("libmbs.a exports '%s', which no public header declares: rename it mbsi_%s" % (name, name[4:]))
    return bad


def library_symbols(lib, dynamic=False):
    import subprocess
    out = subprocess.run(["nm", "-D" if dynamic else "-g", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[2] for line in out.splitlines() if len(line.split()) == 3]


def self_test():
    """The checker must catch what it is for: a tree with five planted violations."""
    import tempfile, io, contextlib
    with tempfile.TemporaryDirectory() as t:
        files = {"src/model/a.c": '#include "mbs/sim.h"\n',                 # public header above
                 "src/sim/b.c": '#include "../dynamics/joint.h"\n',         # private header of another layer
                 "src/dynamics/c.h": '#include "d.h"\n', "src/dynamics/d.h": '#include "c.h"\n',   # circle
                 "src/step/e.c": '#include "mbs.h"\n',                      # umbrella
                 "src/dynamics/joint.h": "", "include/mbs/sim.h": "int mbs_run(void);\n"}   # no comment
        for f, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(t, f)), exist_ok=True)
            open(os.path.join(t, f), "w").write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(t)
        found = out.getvalue()
        ok = rc == 1 and "5 violations" in found and "circle" in found and "umbrella" in found and "no comment" in found
        sym = check_symbols(t, ["mbs_run", "mbsi_helper", "mbs_hidden", "helper"])
        ok = ok and len(sym) == 2 and "mbs_hidden" in sym[1] and "'helper'" in sym[0]
        dyn = check_symbols(t, ["mbs_run", "mbsi_helper"], shared=True)
        ok = ok and len(dyn) == 1 and "mbsi_helper" in dyn[0]
        print("check_layers self-test: " + ("caught all eight planted violations" if ok else "FAILED:\n" + found + "\n".join(sym + dyn)))
        return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:2] in (["--symbols"], ["--dynamic-symbols"]):
        dynamic = sys.argv[1] == "--dynamic-symbols"
        bad = check_symbols(os.path.join(os.path.dirname(__file__), ".."), library_symbols(sys.argv[2], dynamic), dynamic)
        for b in bad:
            print("check_layers: " + b)
        print("check_layers: %d exported name%s without its prefix or its declaration" % (len(bad), "" if len(bad) == 1 else "s"))
        sys.exit(1 if bad else 0)
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
