#!/usr/bin/env python3
"""Writes the project's URDF models and checks them.

    tools/gen/gen_models.py            write urdf/*.urdf and tests/models/*.urdf
    tools/gen/gen_models.py --check    verify the written files (exit status 1 on any failure)
    options: --ref DIR   the project's shared reference folder (default: $MBS_SHARED_REFERENCE,
                         else ../shared/reference beside the repository; third-party files
                         stay out of the repository)
             --root DIR  repository root (default: the parent of tools/)

The robot models (solo12, romeo, robosimian) are rewritten from the physical parameters
of the published URDF files in the shared reference folder: every number is printed as
repr(float(x)), the shortest decimal that parses back to the same double, so the physics
is bit-identical to the source. Without that folder the script prints "skipped:
../shared/reference not found", leaves those three files as they are and checks their
structure only. The passive walker, the compass gait, the rimless wheel and the small test
models are written from the values in this script; the closed forms quoted in their
comments are evaluated here and checked in --check against a small independent multibody
computation (mass matrix from body Jacobians, gravity from the potential gradient,
Coriolis from Christoffel symbols); with the shared folder, --check also compares the
compass gait and the rimless wheel to the bit with the descriptions of Drake's examples
whose layout they keep.

Python 3 standard library only.
"""

import argparse
import math
import os
import struct
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# --------------------------------------------------------------------------- numbers


def num(x):
    """Shortest decimal that round-trips the double (the source string's value)."""
    return repr(float(x))


def nums(v):
    return " ".join(num(x) for x in v)


def bits(x):
    return struct.pack("<d", float(x))


def same_double(a, b):
    return bits(a) == bits(b)


# --------------------------------------------------------------------------- 3x3 algebra


def mat_mul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def mat_vec(A, x):
    return [sum(A[i][k] * x[k] for k in range(3)) for i in range(3)]


def transpose(A):
    return [[A[j][i] for j in range(3)] for i in range(3)]


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


def scale(s, a):
    return [s * x for x in a]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def mat_add(A, B):
    return [[A[i][j] + B[i][j] for j in range(3)] for i in range(3)]


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]


def rpy_matrix(rpy):
    """URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll), maps child to parent."""
    r, p, y = rpy
    return mat_mul(rot_z(y), mat_mul(rot_y(p), rot_x(r)))


def axis_angle(axis, a):
    n = math.sqrt(dot(axis, axis))
    x, y, z = (c / n for c in axis)
    c, s = math.cos(a), math.sin(a)
    t = 1.0 - c
    return [[c + x * x * t, x * y * t - z * s, x * z * t + y * s],
            [y * x * t + z * s, c + y * y * t, y * z * t - x * s],
            [z * x * t - y * s, z * y * t + x * s, c + z * z * t]]


def inertia_matrix(d):
    """3x3 from the six URDF entries (floats)."""
    return [[d["ixx"], d["ixy"], d["ixz"]], [d["ixy"], d["iyy"], d["iyz"]], [d["ixz"], d["iyz"], d["izz"]]]


def sym_eigsys(A):
    """Eigenvalues and eigenvectors (the columns of V) of a symmetric 3x3 matrix by cyclic Jacobi
    rotations: A = V diag(lam) V^T, lam in the order of V's columns (not sorted)."""
    a = [row[:] for row in A]
    V = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    for _ in range(100):
        if a[0][1] ** 2 + a[0][2] ** 2 + a[1][2] ** 2 < 1e-300:
            break
        for p, q in ((0, 1), (0, 2), (1, 2)):
            if a[p][q] == 0.0:
                continue
            th = (a[q][q] - a[p][p]) / (2.0 * a[p][q])
            t = math.copysign(1.0, th) / (abs(th) + math.sqrt(th * th + 1.0))
            c = 1.0 / math.sqrt(t * t + 1.0)
            s = t * c
            J = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
            J[p][p] = c
            J[q][q] = c
            J[p][q] = s
            J[q][p] = -s
            a = mat_mul(transpose(J), mat_mul(a, J))
            V = mat_mul(V, J)
    return [a[i][i] for i in range(3)], V


def nearest_possible_inertia(d, margin, decimals):
    """The six entries d (a dict) moved to the nearest inertia (in the Frobenius norm, same principal
    axes) whose principal moments satisfy the triangle inequality with `margin` to spare: each moment
    moves by a third of the defect plus margin (the two small ones up, the large one down). Entries
    are rounded to `decimals` places; returns (dict, largest change of an entry)."""
    lam, V = sym_eigsys(inertia_matrix(d))
    o = sorted(range(3), key=lambda i: lam[i])
    defect = lam[o[2]] - lam[o[0]] - lam[o[1]]
    s = max(0.0, (defect + margin) / 3.0)
    lam = list(lam)
    lam[o[0]] += s
    lam[o[1]] += s
    lam[o[2]] -= s
    B = [[sum(V[r][k] * lam[k] * V[c][k] for k in range(3)) for c in range(3)] for r in range(3)]
    at = {"ixx": (0, 0), "iyy": (1, 1), "izz": (2, 2), "ixy": (0, 1), "ixz": (0, 2), "iyz": (1, 2)}
    out = {k: round(B[r][c], decimals) + 0.0 for k, (r, c) in at.items()}
    return out, max(abs(out[k] - d[k]) for k in INERTIA_KEYS)


def sym_eig(A):
    """Eigenvalues of a symmetric 3x3 matrix, ascending."""
    return sorted(sym_eigsys(A)[0])


def inertia_ok(I):
    """(positive definite, triangle inequality holds, principal moments)."""
    e = sym_eig(I)
    pd = e[0] > 0.0
    tri = e[0] + e[1] >= e[2]
    return pd, tri, e


def box_inertia(m, sx, sy, sz):
    """Principal moments of a solid box, rounded to 15 digits so that exact decimals print as such."""
    return tuple(float("%.15g" % x) for x in
                 (m / 12.0 * (sy * sy + sz * sz), m / 12.0 * (sx * sx + sz * sz), m / 12.0 * (sx * sx + sy * sy)))


def symmetrize(A):
    """(A + A^T) / 2, and -0.0 printed as 0.0."""
    return [[0.5 * (A[i][j] + A[j][i]) + 0.0 for j in range(3)] for i in range(3)]


def skew(c):
    return [[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]]


def parallel_axis(m, d):
    """m (|d|^2 1 - d d^T): inertia of a point mass m at offset d."""
    dd = dot(d, d)
    return [[m * ((dd if i == j else 0.0) - d[i] * d[j]) for j in range(3)] for i in range(3)]


# --------------------------------------------------------------------------- model representation
#
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")

# A model is a list of items in file order: ("link", Link), ("joint", Joint).
# Numbers are kept as floats; the writer prints them with num().


class Inertial:
    """I None: a point mass, written without <inertia> (which a URDF reader takes as zero)."""

    def __init__(self, mass, xyz, rpy, I, note=None):
        self.mass = float(mass)
        self.xyz = [float(x) for x in xyz]
        self.rpy = [float(x) for x in rpy]
        self.point = I is None
        self.I = {k: float((I or {}).get(k, 0.0)) for k in INERTIA_KEYS}  # ixx ixy ixz iyy iyz izz
        self.note = note


class Visual:
    """A shape a viewer draws: geometry "sphere", "cylinder" or "box" with its attributes (list of
    (name, value or list of values)), placed by xyz rpy in the link frame, colour rgba."""

    def __init__(self, geometry, attrs, rgba, xyz=(0, 0, 0), rpy=(0, 0, 0)):
        self.geometry = geometry
        self.attrs = attrs
        self.rgba = [float(x) for x in rgba]
        self.xyz = [float(x) for x in xyz]
        self.rpy = [float(x) for x in rpy]


class Link:
    def __init__(self, name, inertial=None, note=None, visuals=()):
        self.name = name
        self.inertial = inertial
        self.note = note
        self.visuals = list(visuals)


class Joint:
    def __init__(self, name, jtype, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, limit=None,
                 dynamics=None, note=None):
        self.name = name
        self.type = jtype
        self.parent = parent
        self.child = child
        self.xyz = [float(x) for x in xyz]
        self.rpy = [float(x) for x in rpy]
        self.axis = None if axis is None else [float(x) for x in axis]
        self.limit = limit          # list of (attribute, float) in output order, or None
        self.dynamics = dynamics    # list of (attribute, float), or None
        self.note = note


LIMIT_KEYS = ("lower", "upper", "effort", "velocity")
DYNAMICS_KEYS = ("damping", "friction")


def xml_comment(text, indent=""):
    body = text.strip("\n")
    if "--" in body or body.endswith("-"):
        raise ValueError("text not allowed in an XML comment: %r" % body[:60])
    lines = body.split("\n")
    if len(lines) == 1:
        return "%s<!-- %s -->\n" % (indent, lines[0])
    out = indent + "<!--\n"
    for ln in lines:
        out += (indent + "  " + ln).rstrip() + "\n"
    return out + indent + "-->\n"


def write_model(path, robot_name, header, items):
    s = '<?xml version="1.0"?>\n'
    s += xml_comment(header)
    s += '<robot name="%s">\n' % robot_name
    for kind, it in items:
        if kind == "link":
            if it.note:
                s += xml_comment(it.note, "  ")
            if it.inertial is None and not it.visuals:
                s += '  <link name="%s"/>\n' % it.name
                continue
            iv = it.inertial
            s += '  <link name="%s">\n' % it.name
            if iv is not None:
                s += "    <inertial>\n"
                s += '      <origin xyz="%s" rpy="%s"/>\n' % (nums(iv.xyz), nums(iv.rpy))
                s += '      <mass value="%s"/>\n' % num(iv.mass)
                if iv.note:
                    s += xml_comment(iv.note, "      ")
                if not iv.point:
                    s += "      <inertia %s/>\n" % " ".join('%s="%s"' % (k, num(iv.I[k])) for k in INERTIA_KEYS)
                s += "    </inertial>\n"
            for v in it.visuals:
                s += "    <visual>\n"
                s += '      <origin xyz="%s" rpy="%s"/>\n' % (nums(v.xyz), nums(v.rpy))
                s += "      <geometry><%s %s/></geometry>\n" % (v.geometry, " ".join(
                    '%s="%s"' % (k, nums(x) if isinstance(x, (list, tuple)) else num(x)) for k, x in v.attrs))
                s += '      <material><color rgba="%s"/></material>\n' % " ".join("%g" % c for c in v.rgba)
                s += "    </visual>\n"
            s += "  </link>\n"
        else:
            j = it
            if j.note:
                s += xml_comment(j.note, "  ")
            s += '  <joint name="%s" type="%s">\n' % (j.name, j.type)
            s += '    <parent link="%s"/>\n' % j.parent
            s += '    <child link="%s"/>\n' % j.child
            s += '    <origin xyz="%s" rpy="%s"/>\n' % (nums(j.xyz), nums(j.rpy))
            if j.axis is not None:
                s += '    <axis xyz="%s"/>\n' % nums(j.axis)
            if j.limit is not None:
                s += "    <limit %s/>\n" % " ".join('%s="%s"' % (k, num(v)) for k, v in j.limit)
            if j.dynamics is not None:
                s += "    <dynamics %s/>\n" % " ".join('%s="%s"' % (k, num(v)) for k, v in j.dynamics)
            s += "  </joint>\n"
    s += "</robot>\n"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(s)
    # every file we write must parse
    ET.parse(path)


# --------------------------------------------------------------------------- reading URDF


def strip_ns(root):
    for e in root.iter():
        if isinstance(e.tag, str) and "}" in e.tag:
            e.tag = e.tag.split("}", 1)[1]
    return root


def parse_urdf(path):
    """Returns (robot name, items, raw root). Unknown physics-bearing elements are errors,
    so that nothing is dropped silently."""
    root = strip_ns(ET.parse(path).getroot())
    items = []
    for e in root:
        if not isinstance(e.tag, str):
            continue  # comments
        if e.tag == "link":
            inertial = None
            for c in e:
                if not isinstance(c.tag, str):
                    continue
                if c.tag not in ("inertial", "visual", "collision", "contact"):
                    raise ValueError("%s: link %s: unexpected <%s>" % (path, e.get("name"), c.tag))
            ie = e.find("inertial")
            if ie is not None:
                o = ie.find("origin")
                xyz = (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()
                rpy = (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()
                m = ie.find("mass").get("value")
                ii = ie.find("inertia")
                inertial = Inertial(m, xyz, rpy, None if ii is None else {k: ii.get(k, "0") for k in INERTIA_KEYS})
            items.append(("link", Link(e.get("name"), inertial)))
        elif e.tag == "joint":
            for c in e:
                if isinstance(c.tag, str) and c.tag not in ("parent", "child", "origin", "axis", "limit",
                                                            "dynamics"):
                    raise ValueError("%s: joint %s: unexpected <%s>" % (path, e.get("name"), c.tag))
            o = e.find("origin")
            xyz = (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()
            rpy = (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()
            a = e.find("axis")
            axis = a.get("xyz").split() if a is not None else None
            lim = e.find("limit")
            limit = [(k, float(lim.get(k))) for k in LIMIT_KEYS if lim.get(k) is not None] if lim is not None else None
            dy = e.find("dynamics")
            dyn = [(k, float(dy.get(k))) for k in DYNAMICS_KEYS if dy.get(k) is not None] if dy is not None else None
            items.append(("joint", Joint(e.get("name"), e.get("type"), e.find("parent").get("link"),
                                         e.find("child").get("link"), xyz, rpy, axis, limit, dyn)))
        elif e.tag in ("material", "transmission", "gazebo"):
            continue
        else:
            raise ValueError("%s: unexpected top-level <%s>" % (path, e.tag))
    return root.get("name"), items, root


def tree_info(items):
    links = [it for k, it in items if k == "link"]
    joints = [it for k, it in items if k == "joint"]
    children = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    child_links = {j.child for j in joints}
    roots = [l.name for l in links if l.name not in child_links]
    return links, joints, children, roots


def dfs_movable(items, by_name):
    """Movable joints in depth-first order; siblings in file order, or sorted by joint name
    (what urdfdom/Pinocchio do: urdfdom keeps the joints in a std::map keyed by name)."""
    links, joints, children, roots = tree_info(items)
    out = []

    def rec(link):
        ch = children.get(link, [])
        if by_name:
            ch = sorted(ch, key=lambda j: j.name.encode())
        for j in ch:
            if j.type != "fixed":
                out.append(j.name)
            rec(j.child)
    rec(roots[0])
    return out


def summary(items):
    links, joints, children, roots = tree_info(items)
    types = {}
    for j in joints:
        types[j.type] = types.get(j.type, 0) + 1
    dof = sum(1 for j in joints if j.type in ("revolute", "continuous", "prismatic")) + \
        3 * sum(1 for j in joints if j.type == "planar")
    mass = sum(l.inertial.mass for l in links if l.inertial is not None)
    return links, joints, types, dof, mass, roots


# --------------------------------------------------------------------------- robot models

REF_SOURCES = {
    "solo12": dict(
        robot="Solo-12 quadruped (open dynamic robot initiative)",
        repo="Gepetto/example-robot-data",
        path="robots/solo_description/robots/solo12.urdf",
        commits="snapshot HEAD 39aa94379908fa743da90b21dc9e1fb8308f746b (2025-04-23); file last changed\n"
                "  in 8bf4bcd52780101e16e12e4c64eac559ddfe0c44 (2023-12-08). Upstream origin:\n"
                "  open-dynamic-robot-initiative/robot_properties_solo.",
        license_file="example-robot-data.LICENSE",
        holders="LAAS-CNRS, University of Edinburgh, INRIA (2018-2020)",
    ),
    "romeo": dict(
        robot="Romeo humanoid, 31-joint body model (no fingers)",
        repo="Gepetto/example-robot-data",
        path="robots/romeo_description/urdf/romeo_small.urdf",
        commits="snapshot HEAD 39aa94379908fa743da90b21dc9e1fb8308f746b (2025-04-23); file last changed\n"
                "  in 3ff105e250d5f984d5200a52c2791263be96da5d (2022-04-01). Upstream origin: laas/romeo,\n"
                "  itself from Aldebaran's ros-aldebaran/romeo_robot (romeo_description, licence BSD).",
        license_file="example-robot-data.LICENSE",
        holders="LAAS-CNRS, University of Edinburgh, INRIA (2018-2020)",
    ),
    "robosimian": dict(
        robot="JPL RoboSimian quadruped (4 limbs x 7 revolute joints + 1 wheel)",
        repo="projectchrono/chrono",
        path="data/robot/robosimian/rs.urdf",
        commits="snapshot HEAD 7689fbc02d12c5419fa6acad8791100fd89979dd; file last changed in\n"
                "  dccfbea2bcedb0e22bd2417b9c1610a264d55f6e (2021-01-30).",
        license_file="projectchrono-chrono.LICENSE",
        holders="Project Chrono Development Team (2016)",
    ),
}

# Two right-arm links of the published Romeo whose izz has the decimal point one place off:
# (0.000664209, 0.000211493) where the mirror links of the left arm have (0.00664434, 0.00211065)
# and ixx, iyy agree within 2.3 %. As published the principal moments break the triangle
# inequality by 0.0052 and 0.0016 kg m^2, an inertia no body has. Our file moves that decimal
# point (izz x 10): one digit each, the smallest edit that makes the tensors possible; the other
# entries, the masses and the centres of mass stay as published. link -> (mirror link, the published izz as written, ours as written).
ROMEO_FIXED_IZZ = {
    "RShoulderYawLink": ("LShoulderYawLink", "0.000664209", "0.00664209"),
    "RElbowYawLink": ("LElbowYawLink", "0.000211493", "0.00211493"),
}


def license_block(ref, license_file):
    with open(os.path.join(ref, "licenses", license_file)) as f:
        text = f.read().rstrip()
    return "\n".join(("    " + ln).rstrip() for ln in text.split("\n"))


def robosimian_feet(items):
    """Adds limbN_foot (massless) on limbN_foot_joint (fixed, origin zero) under limbN_link8:
    the link right after limbN_link8, the joint right after limbN_joint8."""
    out = []
    for kind, it in items:
        out.append((kind, it))
        for n in range(1, 5):
            if kind == "link" and it.name == "limb%d_link8" % n:
                out.append(("link", Link("limb%d_foot" % n)))
            if kind == "joint" and it.name == "limb%d_joint8" % n:
                out.append(("joint", Joint("limb%d_foot_joint" % n, "fixed", "limb%d_link8" % n,
                                           "limb%d_foot" % n)))
    return out


ADDED = {
    "solo12": [],
    "romeo": [],
    "robosimian": [("limb%d_foot" % n, "limb%d_foot_joint" % n, "limb%d_link8" % n) for n in range(1, 5)],
    "compass_gait": [],
    "rimless_wheel": [],
}

CONTACT_FRAMES = {
    "solo12": ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"],
    "romeo": ["l_sole", "r_sole"],
    "robosimian": ["limb1_foot", "limb2_foot", "limb3_foot", "limb4_foot"],
    "compass_gait": ["left_leg", "right_leg"],
    "rimless_wheel": ["spoke%d" % k for k in range(1, 9)],
}


def robot_header(name, ref, items_ref, items_out):
    src = REF_SOURCES[name]
    links, joints, types, dof, mass, roots = summary(items_out)
    rl, rj, rtypes, rdof, rmass, _ = summary(items_ref)
    counts = ", ".join("%d %s" % (types[t], t) for t in sorted(types))
    h = []
    h.append("%s.urdf: %s." % (name, src["robot"]))
    h.append("The mbs project's own model, written by tools/gen/gen_models.py (do not edit by hand;")
    h.append("change the script and rerun it).")
    h.append("")
    h.append("Physical parameters from %s, file %s" % (src["repo"], src["path"]))
    h.append("  (%s" % src["commits"] + ")")
    h.append("Kept exactly: link and joint names, the tree, the order of links and joints in the")
    h.append("file, masses, inertias, inertial frames, joint frames (origin xyz rpy), axes, limits")
    h.append("(lower upper effort velocity) and <dynamics> (damping friction). Every number is")
    h.append("printed as the shortest decimal that parses to the same double as the source string,")
    h.append("so the parsed model is bit-identical%s. Links that have no <inertial> in the source" %
             (" (but for the two izz named below)" if name == "romeo" else ""))
    h.append("have none here (massless frames).")
    h.append("Dropped: <visual>, <collision> (meshes and primitive shapes), <material>, simulator")
    h.append("specific elements, the source's XML comments and namespace declarations.")
    if name == "solo12":
        h.append("  (The source also has PyBullet <contact> lateral_friction/restitution on 13 links;")
        h.append("  dropped: contact parameters belong to the scenarios.)")
    if ADDED.get(name):
        h.append("Frames added: four massless links limb1_foot .. limb4_foot, each on a fixed joint")
        h.append("limbN_foot_joint (origin zero) under limbN_link8, the wheel, i.e. at the wheel")
        h.append("centre, wheel axis = local z. Scenarios put contact points of radius 0.12 (the source's")
        h.append("wheel collision cylinder: radius 0.12, length 0.123) at these frames. The foot links")
        h.append("come right after limbN_link8 and the foot joints right after limbN_joint8, so the")
        h.append("order of the movable joints is unchanged.")
    else:
        h.append("Frames added: none. Contact frames already in the source: %s." % " ".join(CONTACT_FRAMES[name]))
    h.append("")
    h.append("Counts: %d links, %d joints (%s), %d DOF without the free flyer; total mass" %
             (len(links), len(joints), counts, dof))
    h.append("%.12g kg (sum of <mass>). Root link %s: load with floating_base=1 (free flyer" % (mass, roots[0]))
    h.append("\"root_joint\"), as Pinocchio's vectors in tests/data/reference/vectors/ were computed.")
    if name == "robosimian":
        h.append("Note: base_to_torso flips the torso with rpy roll = 3.14159 (not exactly pi), the")
        h.append("wheel joints limbN_joint8 have rpy roll = -1.57 and limits +-2e19 (= continuous);")
        h.append("limbN_link0 have mass 0 (fixed to the torso); fixed joints keep the <axis>/<limit>")
        h.append("they carry in the source (meaningless for a fixed joint, kept for fidelity).")
    if name == "romeo":
        order = dfs_movable(items_out, by_name=True)
        h.append("Joint order: Pinocchio (and so the reference vectors) visits the child joints of a")
        h.append("link sorted by joint name (urdfdom keeps joints in a std::map), not in file order.")
        h.append("For this model the two differ; the reference order of the 31 joints is")
        line = " "
        for jn in order:
            if len(line) + len(jn) + 1 > 88:
                h.append(line)
                line = " "
            line += " " + jn
        h.append(line)
        h.append("Changed: izz of RShoulderYawLink and RElbowYawLink, physically impossible in the source")
        h.append("(the decimal point one place off, see the notes at those links), is ten times the")
        h.append("source's here; the reference vectors were computed on the source's values, and")
        h.append("tests/test_pinocchio.c compares this file with those two numbers put back.")
    h.append("")
    h.append("Licence of the source data: BSD-3-Clause, copyright %s;" % src["holders"])
    h.append("the notice, conditions and disclaimer follow, as the licence requires:")
    h.append("")
    h.append(license_block(ref, src["license_file"]))
    return "\n".join(h)


def build_robot(name, ref):
    rname, items, _ = parse_urdf(os.path.join(ref, "urdf", name + ".urdf"))
    if name == "robosimian":
        out = robosimian_feet(items)
    else:
        out = list(items)
    if name == "romeo":
        out = [(k, it) for k, it in out]
        byname = {it.name: it for k, it in out if k == "link"}
        for bad, (mirror, published, ours) in ROMEO_FIXED_IZZ.items():
            src = byname[bad].inertial
            assert same_double(src.I["izz"], float(published)), bad
            pd, tri, e = inertia_ok(inertia_matrix(src.I))
            assert pd and not tri, bad
            fixed = Inertial(src.mass, src.xyz, src.rpy, dict(src.I, izz=float(ours)))
            pd2, tri2, e2 = inertia_ok(inertia_matrix(fixed.I))
            assert pd2 and tri2, bad
            mi = byname[mirror].inertial.I
            diag = max(abs(src.I[k] - mi[k]) / abs(mi[k]) for k in ("ixx", "iyy"))
            fixed.note = (
                "izz corrected. The source has izz = %s: principal moments (%.6g, %.6g, %.6g),\n"
                "which violate the triangle inequality (no body has such an inertia). The mirror link\n"
                "%s has izz = %s, and ixx, iyy within %.2g %% of this link's: the source's\n"
                "decimal point is one place off. Ours is izz x 10 = %s (%.2g %% from the mirror's;\n"
                "principal moments %.6g, %.6g, %.6g): one digit moved, every other number the source's." %
                (published, e[0], e[1], e[2], mirror, num(mi["izz"]), 100 * diag, ours,
                 100 * abs(float(ours) - mi["izz"]) / mi["izz"], e2[0], e2[1], e2[2]))
            out = [(k, Link(it.name, fixed, it.note, it.visuals) if k == "link" and it.name == bad else it)
                   for k, it in out]
    return rname, items, out


# --------------------------------------------------------------------------- passive walker

PW = dict(m=1.0, l=1.0, R=0.1236, w=0.3624, xcm=0.0, ycm=0.6969, zcm=0.1901,
          ixx=0.1982, iyy=0.0186, izz=0.1802, ixy=0.0071, ixz=-0.0023, iyz=0.0573, alpha=0.0702)
PW_TRIANGLE_MARGIN = 1e-6   # how far inside the triangle inequality the legs' inertia is put
PW_ROD = 0.02     # drawing only: the radius of a leg's rod and of the hip axle
PW_RIM = 0.015    # drawing only: the thickness of a foot's disc (the rim of radius R)


def pw_leg_visuals(rgba):
    """What a viewer draws of a leg, in its frame (origin at the foot-circle centre, z up the leg):
    a rod from the foot centre to the hip axis and the foot rim as a thin disc in the x-z plane."""
    p = PW
    return [Visual("cylinder", [("length", p["l"]), ("radius", PW_ROD)], rgba, xyz=(0, 0, p["l"] / 2)),
            Visual("cylinder", [("length", PW_RIM), ("radius", p["R"])], rgba, rpy=(math.pi / 2, 0, 0))]


def build_passive_walker():
    p = PW
    halfw = p["w"] / 2.0
    moby_I = {k: p[k] for k in INERTIA_KEYS}
    # Moby's 4-digit tensor fails the triangle inequality by 1.3e-5 (rounding: the leg is nearly a
    # thin rod); ours is the nearest possible one, 1e-6 inside, to 7 decimals. Every entry moves by
    # less than 5e-6, a tenth of the rounding's half unit, so it rounds back to Moby's numbers.
    left_I, moved = nearest_possible_inertia(moby_I, PW_TRIANGLE_MARGIN, 7)
    assert moved < 5e-6 and all(round(left_I[k], 4) == moby_I[k] for k in INERTIA_KEYS), left_I
    right_I = dict(left_I, ixy=-left_I["ixy"], iyz=-left_I["iyz"])   # mirror in y
    items = [
        ("link", Link("left_leg", Inertial(p["m"], (p["xcm"], p["ycm"], p["zcm"]), (0, 0, 0), left_I),
                      note="Left leg (root; the loader adds the free flyer). Frame = Moby LLEG: origin at the\n"
                           "centre of the foot circle, x forward, y lateral (left), z up along the leg.\n"
                           "Visuals (drawing only): the leg's rod, its foot rim and the hip axle.",
                      visuals=pw_leg_visuals((0.2, 0.4, 0.8, 1)) + [
                          Visual("cylinder", [("length", p["w"]), ("radius", PW_ROD)], (0.5, 0.5, 0.5, 1),
                                 xyz=(0.0, -halfw, p["l"]), rpy=(math.pi / 2, 0, 0))])),
        ("joint", Joint("left_foot_joint", "fixed", "left_leg", "left_foot")),
        ("link", Link("left_foot", note="Contact frame: centre of the left foot rim (the left_leg origin).")),
        ("joint", Joint("hip", "revolute", "left_leg", "right_hip", xyz=(0.0, -halfw, p["l"]), axis=(0, 1, 0),
                        limit=[("lower", -1e16), ("upper", 1e16), ("effort", 0.0), ("velocity", 1e16)],
                        note="Hip: the lateral axis through the hip centre, at height l above the foot centre\n"
                             "and w/2 inboard of the left leg (Moby: joint pose 0 w/2 l in RLEG, axis y).\n"
                             "q = 0: legs parallel; q > 0 rotates the right leg about +y relative to the\n"
                             "left leg. Passive: effort 0; the +-1e16 limits are Moby's (= unlimited).")),
        ("link", Link("right_hip", note="Massless frame on the hip axis, moving with the right leg; the fixed\n"
                                        "joint below puts the right leg's frame at its own foot centre.")),
        ("joint", Joint("right_leg_joint", "fixed", "right_hip", "right_leg", xyz=(0.0, -halfw, -p["l"]))),
        ("link", Link("right_leg", Inertial(p["m"], (p["xcm"], -p["ycm"], p["zcm"]), (0, 0, 0), right_I),
                      note="Right leg: frame = Moby RLEG (foot centre), the left leg mirrored in y.",
                      visuals=pw_leg_visuals((0.8, 0.3, 0.2, 1)))),
        ("joint", Joint("right_foot_joint", "fixed", "right_leg", "right_foot")),
        ("link", Link("right_foot", note="Contact frame: centre of the right foot rim (the right_leg origin).")),
    ]
    pd0, tri0, e0 = inertia_ok(inertia_matrix(moby_I))
    pd, tri, e = inertia_ok(inertia_matrix(left_I))
    assert pd and tri and not tri0
    ga = (math.sin(p["alpha"]), 0.0, -math.cos(p["alpha"]))
    h = """passive_walker.urdf: the 3D passive dynamic walker ("the toy that cannot stand still")
of Coleman, Garcia, Mombaur and Ruina, Phys. Rev. E 64, 022901 (2001), as set up in the
Moby simulator example. Written by tools/gen/gen_models.py (do not edit by hand).

Parameters (nondimensional: leg mass m = 1, leg length l = 1, gravity g = 1) from the
Moby simulator (github.com/PositronicsLab/Moby, Zapolsky and Drumwright, IROS 2015):
example/passive-walker/walker.sdf at commit d26a935 (2015-05-30, "corrected Z CM
position", still so at HEAD a025fae), coldet-plugin.cpp and init.cpp. Only numbers were
taken (Moby's sources say Apache-2.0; the example files carry no header):
  m = {m}, l = {l} (foot-circle centre to hip axis), foot rim radius R = {R},
  hip width w = {w} (lateral distance between the two leg planes),
  leg COM in the leg frame (xcm, +-ycm, zcm) = ({xcm}, +-{ycm}, {zcm}) (left +, right -),
  leg inertia about the COM, leg-frame axes: ixx {ixx}, iyy {iyy}, izz {izz},
  ixy +-{ixy}, ixz {ixz}, iyz +-{iyz} (the right leg is the left one mirrored in y:
  ixy and iyz change sign), slope alpha = {alpha} rad.
Moby gives one rigid-leg inertia; it is used for both legs (mirrored). No
hip mass is needed: the hip is a massless frame link, and the moving body of joint "hip"
is right_hip + right_leg merged.

Structure: left_leg (root) -[hip: revolute, axis y]-> right_hip -[fixed]-> right_leg.
Both leg frames are Moby's (origin at the foot-circle centre, z up the leg, y lateral),
so Moby's initial conditions carry over: the free-flyer pose is the LLEG pose and q_hip is
Moby's hip angle (e.g. the fixed point from Michael Coleman's MATLAB code that Moby's
init.cpp carries (in use in its commit 2adbab4): stance = left leg, base at (0, 0, R)
with init.cpp's yaw, roll and pitch, hip angle theta_sw + pi). Contact
frames left_foot and right_foot sit at the foot-circle centres (the leg frame origins).

Scenario notes and caveats (docs/passive_walker.md has more):
 * Gravity: the slope is applied by tilting gravity on a level floor,
   g = (sin a, 0, -cos a) = ({gx}, 0, {gz}) with |g| = 1; the engine's default
   (0, 0, -9.81) is not this model's unit system.
 * The real foot is a circular rim of radius R in the leg's x-z plane (a torus with tube
   radius 0). A sphere of radius R at left_foot/right_foot matches it only while the
   leg's x-z plane is vertical; a sphere has lateral radius R where the rim has 0, so
   roll (side-to-side rocking) behaves differently.
 * zcm = 0.1901 is the COM height above the foot-circle centre (an older Moby version had
   0.3137 = 0.1901 + R, above the ground contact point). That ycm is lateral (each leg's
   COM 0.6969 outboard of its own foot plane) is Moby's reading; the paper's Table I was not
   available to confirm it.
 * Leg inertia changed: Moby's tensor (above) is nearly singular, a thin rod (principal moments
   {m0:.6g}, {m1:.6g}, {m2:.6g}), and with its 4-digit rounding fails the triangle inequality
   by {tri0:.2g}, which no body does. The file has the nearest tensor that satisfies it, with
   {margin:g} to spare: same principal axes, each principal moment moved by a third of the
   defect and the margin (now {e0:.6g}, {e1:.6g}, {e2:.6g}), written to 7 decimals:
   ixx {ixx_}, iyy {iyy_}, izz {izz_}, ixy +-{ixy_}, ixz {ixz_}, iyz +-{iyz_}.
   No entry moves by more than {moved:.2g} and each rounds back to Moby's 4 digits, so both
   tensors are readings of the same published numbers (tools/gen/gen_models.py).
 * The hip sign convention and the fixed point are carried over from Moby and were not
   re-derived from the paper.""".format(e0=e[0], e1=e[1], e2=e[2], m0=e0[0], m1=e0[1], m2=e0[2],
                                        tri0=e0[2] - e0[0] - e0[1], margin=PW_TRIANGLE_MARGIN, moved=moved,
                                        **{k + "_": num(v) for k, v in left_I.items()},
                                        gx=num(ga[0]), gz=num(ga[2]), **{k: num(v) for k, v in p.items()})
    return "passive_walker", h, items


# --------------------------------------------------------------------------- compass gait, rimless wheel
#
# Two planar walkers of the passive-walking literature, in the layout of the descriptions that
# Drake's examples published for them (link and joint names, tree, order of the elements in the
# file, every number), so that a description written for one runs on the other unchanged: tests
# (tests/test_urdf.c) and --check compare the two to the bit when ../shared/reference is present.

# Goswami, Thuilot and Espiau, "A study of the passive gait of a compass-like biped robot",
# Int. J. Robotics Research 17(12), 1998: hip mass mH, leg mass m at distance b below the hip
# (a above the foot), leg length l = a + b.
CG = dict(mH=10.0, m=5.0, a=0.5, b=0.5)
CG_ROD = 0.0075       # drawing only: the radius of a leg's rod
CG_BALL = 0.05        # drawing only: the radius of a point mass's sphere


def build_compass_gait():
    p = CG
    l = p["a"] + p["b"]

    def leg(side, rgba):
        rod = Visual("cylinder", [("length", l), ("radius", CG_ROD)], rgba, xyz=(0, 0, -l / 2))
        ball = Visual("sphere", [("radius", CG_BALL)], rgba, xyz=(0, 0, -p["b"]))
        return [
            ("link", Link("%s_leg" % side, visuals=[rod],
                          note="The %s leg: massless frame at the hip, the leg along -z, its foot at (0, 0, -l)." % side)),
            ("link", Link("%s_leg_mass" % side, Inertial(p["m"], (0, 0, -p["b"]), (0, 0, 0), None), visuals=[ball],
                          note="The %s leg's point mass m, b below the hip (no <inertia>: zero)." % side)),
            ("joint", Joint("%s_leg_mass_weld" % side, "fixed", "%s_leg" % side, "%s_leg_mass" % side)),
        ]

    items = [("link", Link("world", note="The world: the root, fixed.")),
             ("link", Link("hip", Inertial(p["mH"], (0, 0, 0), (0, 0, 0), None),
                           visuals=[Visual("sphere", [("radius", CG_BALL)], (0, 1, 0, 1))],
                           note="The hip: point mass mH (no <inertia>: zero) on the hip axis.")),
             ("joint", Joint("floating_base", "planar", "world", "hip", axis=(0, 1, 0),
                             note="The hip moves in the x-z plane and pitches about y (plane normal y)."))]
    items += leg("left", (1, 0, 0, 1)) + leg("right", (0, 0, 1, 1))
    items += [("joint", Joint("left_leg_weld", "fixed", "hip", "left_leg",
                              note="The left leg is welded to the hip: the planar root moves the hip and the left leg.")),
              ("joint", Joint("hip_pin", "continuous", "hip", "right_leg", axis=(0, 1, 0),
                              note="The right leg turns about the hip axis y; q = 0: legs together."))]
    h = """compass_gait.urdf: the compass-gait biped (two straight legs joined at a hip, no knees, no
feet) with the parameters of Goswami, Thuilot and Espiau, "A study of the passive gait of a
compass-like biped robot", Int. J. Robotics Research 17(12), 1998. The mbs project's own model,
written by tools/gen/gen_models.py (do not edit by hand; change the script and rerun it).

Parameters: hip mass mH = {mH} kg, leg mass m = {m} kg per leg, a point mass at b = {b} m below
the hip (a = {a} m above the foot), leg length l = a + b = {l} m; every mass a point (no
rotational inertia); total mass mH + 2 m = {total} kg.

Layout: the link and joint names, the tree and the order of the elements are those of the
compass-gait description of Drake's examples (examples/compass_gait, removed from Drake in 2020),
so that scenarios written for either run on both: world (root) -[floating_base: planar, normal
y]-> hip; hip -[left_leg_weld: fixed]-> left_leg -[fixed]-> left_leg_mass; hip -[hip_pin:
continuous, axis y]-> right_leg -[fixed]-> right_leg_mass. Load with floating_base = 0 (the
root is the world, the planar joint is the file's own): q = [z x cos t sin t, hip_pin].
The feet are points 1 m down each leg, at (0, 0, -l) in left_leg and right_leg: scenarios put
their contact points there (scenarios/compass_gait.ini). Visuals (rods and balls) are drawing
only. docs/compass_gait.md has the limit cycle and its checks.""".format(
        l=num(l), total=num(p["mH"] + 2 * p["m"]), **{k: num(v) for k, v in p.items()})
    return "CompassGait", h, items


# McGeer, "Passive dynamic walking", Int. J. Robotics Research 9(2), 1990, and Coleman, Chatterjee
# and Ruina, "Motions of a rimless spoked wheel", Dynamics and Stability of Systems 12(3), 1997:
# a hub of mass m with n massless spokes of length l. The hub gets a rotational inertia I about
# its centre (the ideal wheel has none) so that a flight phase is well defined.
RW = dict(m=1.0, I=1.0, l=1.0, n=8)
RW_ANGLE_DIGITS = 4   # spoke angles k 2 pi / n rounded to 4 decimals, as the layout it follows
RW_HUB = 0.2          # drawing only: radius and width of the hub's disc


def rw_spoke_angles():
    return [round(k * 2.0 * math.pi / RW["n"], RW_ANGLE_DIGITS) for k in range(RW["n"])]


def build_rimless_wheel():
    p = RW
    I = dict(ixx=p["I"], ixy=0.0, ixz=0.0, iyy=p["I"], iyz=0.0, izz=p["I"])
    items = [("link", Link("hub", Inertial(p["m"], (0, 0, 0), (0, 0, 0), I),
                           visuals=[Visual("cylinder", [("length", RW_HUB), ("radius", RW_HUB)], (0.6, 0.2, 0.2, 1),
                                           rpy=(round(math.pi / 2, RW_ANGLE_DIGITS), 0, 0))],
                           note="The hub: mass m, inertia I about every axis through its centre (the root)."))]
    angles = rw_spoke_angles()
    for k, th in enumerate(angles, 1):
        items.append(("link", Link("spoke%d" % k, visuals=[Visual("cylinder", [("length", p["l"]), ("radius", CG_ROD)],
                                                                     (0, 0, 0, 1), xyz=(0, 0, -p["l"] / 2))])))
        items.append(("joint", Joint("spoke%d_weld" % k, "fixed", "hub", "spoke%d" % k, rpy=(0, th, 0))))
    dev = max(abs(th - k * 2.0 * math.pi / p["n"]) for k, th in enumerate(angles))
    h = """rimless_wheel.urdf: the rimless wheel of McGeer, "Passive dynamic walking", Int. J. Robotics
Research 9(2), 1990 (and Coleman, Chatterjee and Ruina, Dynamics and Stability of Systems 12(3),
1997): a hub with {n} massless spokes rolling from spoke to spoke. The mbs project's own model,
written by tools/gen/gen_models.py (do not edit by hand; change the script and rerun it).

Parameters: hub mass m = {m} kg at the hub's centre, spoke length l = {l} m, {n} spokes, 2 alpha =
2 pi / {n} between neighbours. The ideal wheel has no rotational inertia; the hub gets I = {I} kg m^2
about every axis through its centre, so that a flight phase (no spoke on the ground) is well
defined, as in the rimless-wheel description of Drake's examples (examples/rimless_wheel, removed
from Drake in 2020), whose layout this file keeps: link hub (the root), links spoke1 .. spoke{n},
each on a fixed joint spokeK_weld turned about y by (K - 1) 2 pi / {n}, written with {d} decimals as
there ({angles}; at most {dev:.2g} rad from even spacing).
Each spoke runs along -z of its own frame: its tip is at (0, 0, -l) in spokeK, where scenarios put
the contact points (scenarios/rimless_wheel.ini). Load with floating_base = 2 (a planar root) or 1.
The visuals (a disc and rods) are drawing only.""".format(
        n=p["n"], m=num(p["m"]), l=num(p["l"]), I=num(p["I"]), d=RW_ANGLE_DIGITS,
        angles=" ".join(num(a) for a in angles), dev=dev)
    return "RimlessWheel", h, items


PLANAR_WALKERS = [("compass_gait", build_compass_gait), ("rimless_wheel", build_rimless_wheel)]


# --------------------------------------------------------------------------- test models

G = 9.81


def build_pendulum():
    items = [
        ("link", Link("base")),
        ("joint", Joint("hinge", "revolute", "base", "bob", axis=(0, 1, 0),
                        limit=[("lower", -10.0), ("upper", 10.0), ("effort", 100.0), ("velocity", 100.0)])),
        ("link", Link("bob", Inertial(2.0, (0, 0, -0.5), (0, 0, 0),
                                      dict(ixx=0.01, ixy=0.0, ixz=0.0, iyy=0.01, iyz=0.0, izz=0.01)))),
    ]
    h = """pendulum.urdf: test model, a single pendulum, hand-checkable dynamics.
Load with floating_base = 0 (base is fixed to the world). Gravity (0, 0, -9.81).
Joint hinge: revolute about y at the base origin, R_y(q) = [[c 0 s] [0 1 0] [-s 0 c]];
at q = 0 the bob hangs straight down; q > 0 swings the bob towards -x.
Bob: m = 2 at (0, 0, -0.5) in its frame, inertia 0.01 * identity about its COM.
  M(q) = iyy + m l^2 = 0.01 + 2 * 0.25 = {M}     (constant)
  g(q) = m g l sin q = 2 * 9.81 * 0.5 sin q = {gl} sin q   (rnea(q, 0, 0))
  C = 0; kinetic energy 0.5 * {M} qd^2; potential energy -m g l cos q = -{gl} cos q
  (zero at the hinge height); world COM (-0.5 sin q, 0, -0.5 cos q).""".format(
        M=num(0.01 + 2 * 0.25), gl=num(2 * G * 0.5))
    return "pendulum", h, items


DP = dict(m1=1.0, m2=0.5, l1=1.0, c1=1.0, c2=0.8, I1=0.03, I2=0.01)


def dp_closed_form(q, qd):
    """Double pendulum M, g, C (C qd = Coriolis/centrifugal) from the formulas in its comment."""
    q1, q2 = q
    d1, d2 = qd
    c2, s2 = math.cos(q2), math.sin(q2)
    s1, s12 = math.sin(q1), math.sin(q1 + q2)
    M = [[1.86 + 0.8 * c2, 0.33 + 0.4 * c2], [0.33 + 0.4 * c2, 0.33]]
    g = [G * (1.5 * s1 + 0.4 * s12), G * 0.4 * s12]
    C = [[-0.4 * s2 * d2, -0.4 * s2 * (d1 + d2)], [0.4 * s2 * d1, 0.0]]
    return M, g, C


def build_double_pendulum():
    items = [
        ("link", Link("base")),
        ("joint", Joint("joint1", "revolute", "base", "link1", axis=(0, 1, 0),
                        limit=[("lower", -10.0), ("upper", 10.0), ("effort", 100.0), ("velocity", 100.0)])),
        ("link", Link("link1", Inertial(1.0, (0, 0, -1.0), (0, 0, 0),
                                        dict(ixx=0.02, ixy=0.0, ixz=0.0, iyy=0.03, iyz=0.0, izz=0.04)))),
        ("joint", Joint("joint2", "revolute", "link1", "link2", xyz=(0, 0, -1.0), axis=(0, 1, 0),
                        limit=[("lower", -10.0), ("upper", 10.0), ("effort", 100.0), ("velocity", 100.0)])),
        ("link", Link("link2", Inertial(0.5, (0, 0, -0.8), (0, 0, 0),
                                        dict(ixx=0.01, ixy=0.0, ixz=0.0, iyy=0.01, iyz=0.0, izz=0.02)))),
    ]
    qs, qds = (0.3, -0.7), (0.5, 1.2)
    M, g, C = dp_closed_form(qs, qds)
    Cqd = [C[0][0] * qds[0] + C[0][1] * qds[1], C[1][0] * qds[0] + C[1][1] * qds[1]]
    h = """double_pendulum.urdf: test model, a planar double pendulum in the x-z plane with
closed-form dynamics. Load with floating_base = 0. Gravity (0, 0, -9.81).

Joints joint1, joint2: revolute about y, R_y(q) = [[c 0 s] [0 1 0] [-s 0 c]];
joint1 at the base origin, joint2 at (0, 0, -1) in link1 (l1 = 1).
link1: m1 = 1   at (0, 0, -1)   in link1, inertia diag(0.02, 0.03, 0.04) about its COM
link2: m2 = 0.5 at (0, 0, -0.8) in link2, inertia diag(0.01, 0.01, 0.02) about its COM
Only iyy enters (I1 = 0.03, I2 = 0.01): the motion is planar with rotation about y.
Notation c1 = cos q1, s1 = sin q1, c2 = cos q2, s2 = sin q2, s12 = sin(q1 + q2), qd = dq/dt.

World COM positions (q = 0: both links hang down, q > 0 swings towards -x):
  p1 = (-s1, 0, -c1),  p2 = (-s1 - 0.8 s12, 0, -c1 - 0.8 cos(q1 + q2))
Lagrangian derivation, T = 1/2 qd^T M(q) qd, V = -9.81 (1.5 c1 + 0.4 cos(q1 + q2)):
  M11 = m1 l1^2 + I1 + m2 (l1^2 + 0.8^2 + 2 l1 0.8 c2) + I2 = 1.86 + 0.8 c2
  M12 = M21 = m2 (0.8^2 + l1 0.8 c2) + I2               = 0.33 + 0.4 c2
  M22 = m2 0.8^2 + I2                                    = 0.33
Gravity torque g(q) = dV/dq = rnea(q, 0, 0):
  g1 = 9.81 (1.5 s1 + 0.4 s12) = 14.715 s1 + 3.924 s12
  g2 = 9.81 * 0.4 s12          = 3.924 s12
Coriolis matrix (Christoffel symbols of the first kind, so dM/dt - 2C is skew), h = -0.4 s2:
  C = [[ h qd2,  h (qd1 + qd2) ],
       [ -h qd1, 0             ]]
  C qd = [ -0.4 s2 (2 qd1 qd2 + qd2^2),  0.4 s2 qd1^2 ]   (= rnea(q, qd, 0) - g(q))
Equations of motion: M(q) qdd + C(q, qd) qd + g(q) = tau.
Sample values at q = (0.3, -0.7), qd = (0.5, 1.2) (from these formulas):
  M    = [[{M00}, {M01}], [{M10}, {M11}]]
  g    = [{g0}, {g1}]
  C qd = [{c0}, {c1}]""".format(
        M00=num(M[0][0]), M01=num(M[0][1]), M10=num(M[1][0]), M11=num(M[1][1]),
        g0=num(g[0]), g1=num(g[1]), c0=num(Cqd[0]), c1=num(Cqd[1]))
    return "double_pendulum", h, items


def build_free_box():
    m, size = 3.0, (0.2, 0.3, 0.4)
    com, rpy = (0.01, -0.02, 0.03), (0.1, 0.2, 0.3)
    ix, iy, iz = box_inertia(m, *size)
    R = rpy_matrix(rpy)
    Ic = symmetrize(mat_mul(R, mat_mul([[ix, 0, 0], [0, iy, 0], [0, 0, iz]], transpose(R))))
    IO = symmetrize(mat_add(Ic, parallel_axis(m, com)))
    items = [("link", Link("box", Inertial(m, com, rpy, dict(ixx=ix, ixy=0.0, ixz=0.0, iyy=iy, iyz=0.0, izz=iz))))]

    def mat_txt(A):
        return "\n".join("    [%s]" % ", ".join(num(x) for x in row) for row in A)
    h = """free_box.urdf: test model, a single free rigid body. Load with floating_base = 1: the
only joint is the free flyer "root_joint" (nq = 7, nv = 6).
Solid box, mass 3, size 0.2 x 0.3 x 0.4, so the principal inertia about the COM is
  m/12 (b^2 + c^2, a^2 + c^2, a^2 + b^2) = ({ix}, {iy}, {iz})
in the inertial frame, which is at xyz = (0.01, -0.02, 0.03), rpy = (0.1, 0.2, 0.3)
(URDF: R = Rz(0.3) Ry(0.2) Rx(0.1)) in the link frame. Evaluated here in double precision:
  inertia about the COM in link axes, R diag(...) R^T =
{Ic}
  inertia about the link origin in link axes, + m (|c|^2 1 - c c^T) =
{IO}
With the base at the identity, M (Pinocchio order [v w], body frame) is
  [[m 1, -m [c]x], [m [c]x, I_origin]], [c]x the cross-product matrix of the COM.""".format(
        ix=num(ix), iy=num(iy), iz=num(iz), Ic=mat_txt(Ic), IO=mat_txt(IO))
    return "free_box", h, items


PB = dict(ms=1.5, cs=(0.1, -0.05, 0.02), Is=dict(ixx=0.02, ixy=0.001, ixz=-0.002, iyy=0.03, iyz=0.003, izz=0.04),
          ax=0.3, ma=0.5, da=0.2, Ia=dict(ixx=0.0005, ixy=0.0, ixz=0.0, iyy=0.005, iyz=0.0, izz=0.005))


def pb_closed_form(phi):
    """Planar body M(q) in v = [vx vy wz (local), phi_dot]; independent of x, y, theta."""
    p = PB
    ms, (cx, cy, _), Izs = p["ms"], p["cs"], p["Is"]["izz"]
    ma, ax, da, Iza = p["ma"], p["ax"], p["da"], p["Ia"]["izz"]
    c, s = math.cos(phi), math.sin(phi)
    rx, ry = da * c, da * s            # arm COM from the arm joint, slider axes
    px, py = ax + rx, ry               # arm COM from the slider origin
    M = [[0.0] * 4 for _ in range(4)]
    M[0][0] = M[1][1] = ms + ma
    M[0][2] = -ms * cy - ma * py
    M[1][2] = ms * cx + ma * px
    M[0][3] = -ma * ry
    M[1][3] = ma * rx
    M[2][2] = Izs + ms * (cx * cx + cy * cy) + Iza + ma * (px * px + py * py)
    M[2][3] = Iza + ma * (px * rx + py * ry)
    M[3][3] = Iza + ma * (rx * rx + ry * ry)
    for i in range(4):
        for j in range(i):
            M[i][j] = M[j][i]
    return [[x + 0.0 for x in row] for row in M]


def build_planar_body():
    p = PB
    items = [
        ("link", Link("world")),
        ("joint", Joint("plane", "planar", "world", "slider", axis=(0, 0, 1))),
        ("link", Link("slider", Inertial(p["ms"], p["cs"], (0, 0, 0), p["Is"]))),
        ("joint", Joint("arm", "revolute", "slider", "arm", xyz=(p["ax"], 0, 0), axis=(0, 0, 1),
                        limit=[("lower", -10.0), ("upper", 10.0), ("effort", 100.0), ("velocity", 100.0)])),
        ("link", Link("arm", Inertial(p["ma"], (p["da"], 0, 0), (0, 0, 0), p["Ia"]))),
    ]
    M0 = pb_closed_form(0.0)
    M1 = pb_closed_form(0.9)

    def mat_txt(A):
        return "\n".join("    [%s]" % ", ".join(num(x) for x in row) for row in A)
    h = """planar_body.urdf: test model for the planar joint. Load with floating_base = 0.
Joint plane: URDF planar, plane normal = axis = z of the world; mbs/Pinocchio coordinates
q = [x y cos(theta) sin(theta)], v = [vx vy wz] in the slider (body) frame, in-plane axes x, y.
Joint arm: revolute about z at (0.3, 0, 0) in the slider frame, angle phi.
slider: m_s = 1.5, COM c = (0.1, -0.05, 0.02), full inertia about the COM
        (ixx 0.02, ixy 0.001, ixz -0.002, iyy 0.03, iyz 0.003, izz 0.04)
arm:    m_a = 0.5, COM (0.2, 0, 0) in the arm frame, inertia diag(0.0005, 0.005, 0.005)
Total mass 2. Gravity (0, 0, -9.81) is normal to the plane, so g(q) = 0 for every q.
Only izz of each body enters (rotation is about z only), and cz = 0.02 does not either.
Mass matrix in v = [vx vy wz phid], independent of x, y, theta (body-frame velocities);
with r = 0.2 (cos phi, sin phi) (arm COM from the arm joint) and p = (0.3, 0, 0) + r:
  M11 = M22 = m_s + m_a = 2,  M12 = 0
  M13 = -m_s cy - m_a p_y = 0.075 - 0.1 sin phi
  M23 =  m_s cx + m_a p_x = 0.3 + 0.1 cos phi
  M14 = -m_a r_y = -0.1 sin phi,   M24 = m_a r_x = 0.1 cos phi
  M33 = izz_s + m_s (cx^2 + cy^2) + izz_a + m_a |p|^2 = 0.12875 + 0.06 cos phi
  M34 = izz_a + m_a p.r = 0.025 + 0.03 cos phi
  M44 = izz_a + m_a |r|^2 = 0.025
Evaluated here at phi = 0:
{M0}
and at phi = 0.9:
{M1}""".format(M0=mat_txt(M0), M1=mat_txt(M1))
    return "planar_body", h, items


FC = dict(
    mb=2.0, cb=(0.05, 0.0, 0.1), Ib=dict(ixx=0.01, ixy=0.0, ixz=0.0, iyy=0.02, iyz=0.0, izz=0.03),
    weld_xyz=(0.2, -0.1, 0.3), weld_rpy=(0.4, -0.3, 0.7),
    mp=0.8, cp=(0.03, 0.04, -0.02), rp=(0.2, 0.1, -0.3),
    Ip=dict(ixx=0.012, ixy=0.002, ixz=-0.001, iyy=0.02, iyz=0.003, izz=0.015),
    hinge_xyz=(0.1, 0.0, 0.05), hinge_rpy=(0.0, 0.5, 0.0),
    mt=0.3, ct=(0.15, 0.0, 0.0), It=dict(ixx=0.0002, ixy=0.0, ixz=0.0, iyy=0.002, iyz=0.0, izz=0.002),
    end_xyz=(0.3, 0.0, 0.0),
)


def fc_merged():
    """Merged body base + plate in the base frame: mass, COM, inertia about the COM (base axes),
    and the hinge placement in the base frame."""
    p = FC
    Rw = rpy_matrix(p["weld_rpy"])
    cp_b = add(list(p["weld_xyz"]), mat_vec(Rw, p["cp"]))
    Rpi = mat_mul(Rw, rpy_matrix(p["rp"]))
    Ip_b = symmetrize(mat_mul(Rpi, mat_mul(inertia_matrix(p["Ip"]), transpose(Rpi))))
    Ib = inertia_matrix(p["Ib"])
    m = p["mb"] + p["mp"]
    com = scale(1.0 / m, add(scale(p["mb"], p["cb"]), scale(p["mp"], cp_b)))
    I = symmetrize(mat_add(mat_add(Ib, parallel_axis(p["mb"], sub(list(p["cb"]), com))),
                           mat_add(Ip_b, parallel_axis(p["mp"], sub(cp_b, com)))))
    Rh = mat_mul(Rw, rpy_matrix(p["hinge_rpy"]))
    ph = add(list(p["weld_xyz"]), mat_vec(Rw, p["hinge_xyz"]))
    return m, com, I, cp_b, Ip_b, Rh, ph


def build_fixed_chain():
    p = FC
    items = [
        ("link", Link("base", Inertial(p["mb"], p["cb"], (0, 0, 0), p["Ib"]))),
        ("joint", Joint("weld", "fixed", "base", "plate", xyz=p["weld_xyz"], rpy=p["weld_rpy"])),
        ("link", Link("plate", Inertial(p["mp"], p["cp"], p["rp"], p["Ip"]))),
        ("joint", Joint("hinge", "revolute", "plate", "tip", xyz=p["hinge_xyz"], rpy=p["hinge_rpy"], axis=(0, 0, 1),
                        limit=[("lower", -3.0), ("upper", 3.0), ("effort", 10.0), ("velocity", 10.0)])),
        ("link", Link("tip", Inertial(p["mt"], p["ct"], (0, 0, 0), p["It"]))),
        ("joint", Joint("tip_end_joint", "fixed", "tip", "tip_end", xyz=p["end_xyz"])),
        ("link", Link("tip_end")),
    ]
    m, com, I, cp_b, Ip_b, Rh, ph = fc_merged()

    def mat_txt(A):
        return "\n".join("    [%s]" % ", ".join(num(x) for x in row) for row in A)
    h = """fixed_chain.urdf: test model for fixed-joint merging and frames.
base (mass)
  -[weld: fixed, xyz (0.2, -0.1, 0.3), rpy (0.4, -0.3, 0.7)]->
plate (mass, full inertia, own inertial rpy)
  -[hinge: revolute about z, xyz (0.1, 0, 0.05), rpy (0, 0.5, 0)]->
tip (mass)
  -[tip_end_joint: fixed, xyz (0.3, 0, 0)]->
tip_end (massless frame).
Load with floating_base = 1 so that the merged root body (base + plate) is a moving body:
two bodies, nq = 7 + 1, nv = 6 + 1. (With floating_base = 0 base + plate are welded to
the world and only tip moves.) URDF rpy means R = Rz(y) Ry(p) Rx(r).

Hand computation (Python doubles, tools/gen/gen_models.py): the plate's COM and inertia
brought into base axes are
  plate COM in base frame = weld_xyz + R_weld c_plate = ({cpx}, {cpy}, {cpz})
  plate inertia in base axes = (R_weld R_plate_inertial) I (...)^T =
{Ipb}
Merged first body (base + plate), in the base link frame:
  mass = {m}
  COM  = ({cx}, {cy}, {cz})
  inertia about that COM, base axes =
{I}
The hinge joint frame in the merged body (base) frame: translation
  ({hx}, {hy}, {hz}), rotation R_weld Ry(0.5) =
{Rh}
Total mass {mt}.""".format(
        cpx=num(cp_b[0]), cpy=num(cp_b[1]), cpz=num(cp_b[2]), Ipb=mat_txt(Ip_b), m=num(m),
        cx=num(com[0]), cy=num(com[1]), cz=num(com[2]), I=mat_txt(I),
        hx=num(ph[0]), hy=num(ph[1]), hz=num(ph[2]), Rh=mat_txt(Rh), mt="%.15g" % (m + p["mt"]))
    return "fixed_chain", h, items


TEST_MODELS = [build_pendulum, build_double_pendulum, build_free_box, build_planar_body, build_fixed_chain]
ROBOTS = ["solo12", "romeo", "robosimian"]


def shared_reference(root):
    """The project's shared reference folder (third-party robot descriptions and their licences,
    which stay out of the repository): $MBS_SHARED_REFERENCE, else ../shared/reference beside the
    repository root. None when it is absent, after printing one "skipped" line."""
    ref = os.environ.get("MBS_SHARED_REFERENCE") or os.path.join(root, "..", "shared", "reference")
    if os.path.isdir(ref):
        return ref
    print("skipped: ../shared/reference not found")
    return None


def generate(root, ref):
    """Writes every model; the robots (solo12, romeo, robosimian) only when ref is not None, as
    their parameters are read from the published descriptions there."""
    for name in ROBOTS if ref is not None else []:
        rname, items_ref, items_out = build_robot(name, ref)
        write_model(os.path.join(root, "urdf", name + ".urdf"), rname,
                    robot_header(name, ref, items_ref, items_out), items_out)
        print("wrote urdf/%s.urdf" % name)
    name, h, items = build_passive_walker()
    write_model(os.path.join(root, "urdf", name + ".urdf"), name, h, items)
    print("wrote urdf/%s.urdf" % name)
    for name, build in PLANAR_WALKERS:
        rname, h, items = build()
        write_model(os.path.join(root, "urdf", name + ".urdf"), rname, h, items)
        print("wrote urdf/%s.urdf" % name)
    for b in TEST_MODELS:
        name, h, items = b()
        write_model(os.path.join(root, "tests", "models", name + ".urdf"), name, h, items)
        print("wrote tests/models/%s.urdf" % name)


# --------------------------------------------------------------------------- independent multibody check
#
# A small rigid-body computation used only by --check, written from scratch for it:
# forward kinematics over the URDF tree (fixed, revolute, planar, free base at identity),
# M = sum_i m_i Jv_i^T Jv_i + Jw_i^T (R I R^T) Jw_i over every link with an inertial,
# g = -sum_i m_i Jv_i^T gvec, C from Christoffel symbols of M (central differences).


class Mech:
    def __init__(self, items):
        self.links, self.joints, self.children, roots = tree_info(items)
        assert len(roots) == 1
        self.root = roots[0]
        self.link = {l.name: l for l in self.links}
        self.order = []   # joints in DFS order (file order of siblings)

        def rec(ln):
            for j in self.children.get(ln, []):
                self.order.append(j)
                rec(j.child)
        rec(self.root)
        self.nv = 0
        self.vidx = {}
        for j in self.order:
            n = {"fixed": 0, "revolute": 1, "continuous": 1, "prismatic": 1, "planar": 3}[j.type]
            self.vidx[j.name] = (self.nv, n)
            self.nv += n

    def fk(self, q):
        """q: dict joint -> value (revolute: angle; planar: (x, y, theta)). Returns per link
        (R, p) in the world and the list of motion columns: (dof, kind, R, p, link-set)."""
        pose = {self.root: ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.0, 0.0, 0.0])}
        cols = {}
        for j in self.order:
            Rp, pp = pose[j.parent]
            Rj = mat_mul(Rp, rpy_matrix(j.rpy))
            pj = add(pp, mat_vec(Rp, j.xyz))
            if j.type == "fixed":
                pose[j.child] = (Rj, pj)
                continue
            i0, n = self.vidx[j.name]
            if j.type in ("revolute", "continuous"):
                Rc = mat_mul(Rj, axis_angle(j.axis, q.get(j.name, 0.0)))
                pose[j.child] = (Rc, pj)
                cols[i0] = ("rot", mat_vec(Rj, j.axis), pj, j.child)
            elif j.type == "planar":
                assert j.axis == [0.0, 0.0, 1.0]
                x, y, th = q.get(j.name, (0.0, 0.0, 0.0))
                Rc = mat_mul(Rj, rot_z(th))
                pc = add(pj, mat_vec(Rj, [x, y, 0.0]))
                pose[j.child] = (Rc, pc)
                # body-frame velocities vx, vy (child axes), wz about the child z
                cols[i0] = ("lin", mat_vec(Rc, [1.0, 0.0, 0.0]), pc, j.child)
                cols[i0 + 1] = ("lin", mat_vec(Rc, [0.0, 1.0, 0.0]), pc, j.child)
                cols[i0 + 2] = ("rot", mat_vec(Rc, [0.0, 0.0, 1.0]), pc, j.child)
            else:
                raise ValueError(j.type)
        return pose, cols

    def subtree(self, ln):
        out = {ln}
        for j in self.children.get(ln, []):
            out |= self.subtree(j.child)
        return out

    def bodies(self, pose):
        """(mass, world COM, world inertia about COM, link) for links with an inertial."""
        out = []
        for l in self.links:
            iv = l.inertial
            if iv is None or iv.mass == 0.0:
                continue
            R, p = pose[l.name]
            c = add(p, mat_vec(R, iv.xyz))
            Ri = mat_mul(R, rpy_matrix(iv.rpy))
            I = mat_mul(Ri, mat_mul(inertia_matrix(iv.I), transpose(Ri)))
            out.append((iv.mass, c, I, l.name))
        return out

    def jac(self, cols, link, point):
        """3 x nv linear and angular Jacobians of `point` fixed on `link` (world axes)."""
        Jv = [[0.0] * self.nv for _ in range(3)]
        Jw = [[0.0] * self.nv for _ in range(3)]
        for i, (kind, a, o, child) in cols.items():
            if link not in self.subtree(child):
                continue
            if kind == "rot":
                v = cross(a, sub(point, o))
                for r in range(3):
                    Jw[r][i] = a[r]
                    Jv[r][i] = v[r]
            else:
                for r in range(3):
                    Jv[r][i] = a[r]
        return Jv, Jw

    def mass_matrix(self, q):
        pose, cols = self.fk(q)
        n = self.nv
        M = [[0.0] * n for _ in range(n)]
        for m, c, I, ln in self.bodies(pose):
            Jv, Jw = self.jac(cols, ln, c)
            for a in range(n):
                for b in range(n):
                    s = m * sum(Jv[r][a] * Jv[r][b] for r in range(3))
                    s += sum(Jw[r][a] * sum(I[r][k] * Jw[k][b] for k in range(3)) for r in range(3))
                    M[a][b] += s
        return M

    def gravity(self, q, gvec=(0.0, 0.0, -G)):
        pose, cols = self.fk(q)
        g = [0.0] * self.nv
        for m, c, I, ln in self.bodies(pose):
            Jv, _ = self.jac(cols, ln, c)
            for a in range(self.nv):
                g[a] -= m * sum(Jv[r][a] * gvec[r] for r in range(3))
        return g


def check_test_models(root, report):
    ok = True

    def close(a, b, tol, what):
        nonlocal ok
        err = max(abs(x - y) for x, y in zip(a, b))
        if err > tol:
            ok = False
            report("  FAIL %s: max error %.3g" % (what, err))
        return err

    def load(name):
        _, items, _ = parse_urdf(os.path.join(root, "tests", "models", name + ".urdf"))
        return items

    # pendulum
    mech = Mech(load("pendulum"))
    e = 0.0
    for qq in (0.0, 0.4, -1.3, 2.9):
        e = max(e, close([mech.mass_matrix({"hinge": qq})[0][0]], [0.51], 1e-14, "pendulum M"))
        e = max(e, close(mech.gravity({"hinge": qq}), [2 * G * 0.5 * math.sin(qq)], 1e-13, "pendulum g"))
    report("  pendulum: M = 0.51, g = 9.81 sin q  (max error %.2g)" % e)

    # double pendulum: M, g and the Christoffel C against the closed forms
    mech = Mech(load("double_pendulum"))
    eM = eg = eC = 0.0
    for qv, qdv in (((0.3, -0.7), (0.5, 1.2)), ((1.1, 0.4), (-0.8, 0.3)), ((-2.0, 2.5), (1.5, -1.0))):
        M, g, C = dp_closed_form(qv, qdv)
        qd = {"joint1": qv[0], "joint2": qv[1]}
        Mn = mech.mass_matrix(qd)
        eM = max(eM, close(sum(Mn, []), sum(M, []), 1e-13, "double pendulum M"))
        eg = max(eg, close(mech.gravity(qd), g, 1e-12, "double pendulum g"))
        h = 1e-6
        dM = []
        for k in range(2):
            qp, qm = list(qv), list(qv)
            qp[k] += h
            qm[k] -= h
            Mp = mech.mass_matrix({"joint1": qp[0], "joint2": qp[1]})
            Mm = mech.mass_matrix({"joint1": qm[0], "joint2": qm[1]})
            dM.append([[(Mp[i][j] - Mm[i][j]) / (2 * h) for j in range(2)] for i in range(2)])
        Cn = [[sum(0.5 * (dM[k][i][j] + dM[j][i][k] - dM[i][j][k]) * qdv[k] for k in range(2))
               for j in range(2)] for i in range(2)]
        eC = max(eC, close(sum(Cn, []), sum(C, []), 1e-8, "double pendulum C"))
    report("  double_pendulum: closed-form M, g, C match (max error M %.2g, g %.2g, C %.2g by central differences)"
           % (eM, eg, eC))

    # planar body
    mech = Mech(load("planar_body"))
    e = eg = 0.0
    for x, y, th, phi in ((0.0, 0.0, 0.0, 0.0), (0.3, -1.2, 0.7, 0.9), (-2.0, 0.5, -2.4, -1.7)):
        qd = {"plane": (x, y, th), "arm": phi}
        e = max(e, close(sum(mech.mass_matrix(qd), []), sum(pb_closed_form(phi), []), 1e-14, "planar_body M"))
        eg = max(eg, close(mech.gravity(qd), [0.0] * 4, 1e-15, "planar_body g"))
    report("  planar_body: closed-form M (body-frame planar velocities) matches (max error %.2g), g = 0" % e)

    # fixed chain: merged body by an independent route (6x6 spatial inertias at the base origin)
    items = load("fixed_chain")
    links = {it.name: it for k, it in items if k == "link"}
    joints = {it.name: it for k, it in items if k == "joint"}

    def spatial(m, c, Ic):
        cx = skew(c)
        top = mat_add(Ic, [[m * sum(cx[i][k] * cx[j][k] for k in range(3)) for j in range(3)] for i in range(3)])
        return m, [[m * cx[i][j] for j in range(3)] for i in range(3)], top

    def transform_inertial(R, p, iv):
        Ri = mat_mul(R, rpy_matrix(iv.rpy))
        return iv.mass, add(p, mat_vec(R, iv.xyz)), mat_mul(Ri, mat_mul(inertia_matrix(iv.I), transpose(Ri)))
    I3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    w = joints["weld"]
    parts = [transform_inertial(I3, [0.0, 0.0, 0.0], links["base"].inertial),
             transform_inertial(rpy_matrix(w.rpy), w.xyz, links["plate"].inertial)]
    mt, hsum, Isum = 0.0, [[0.0] * 3 for _ in range(3)], [[0.0] * 3 for _ in range(3)]
    for m, c, Ic in parts:
        mm, h, top = spatial(m, c, Ic)
        mt += mm
        hsum = mat_add(hsum, h)
        Isum = mat_add(Isum, top)
    com = [hsum[2][1] / mt, hsum[0][2] / mt, hsum[1][0] / mt]
    cx = skew(com)
    Ic = mat_add(Isum, [[-mt * sum(cx[i][k] * cx[j][k] for k in range(3)) for j in range(3)] for i in range(3)])
    m0, com0, I0, _, _, _, _ = fc_merged()
    e = max(close([mt], [m0], 1e-15, "fixed_chain mass"), close(com, com0, 1e-15, "fixed_chain com"),
            close(sum(Ic, []), sum(I0, []), 1e-15, "fixed_chain inertia"))
    pd, tri, ev = inertia_ok(Ic)
    report("  fixed_chain: merged mass/COM/inertia reproduced via spatial inertias (max error %.2g), PD %s, "
           "triangle %s" % (e, pd, tri))

    # free box: inertia about the COM in link axes has the box's principal moments
    items = load("free_box")
    iv = items[0][1].inertial
    R = rpy_matrix(iv.rpy)
    Ic = mat_mul(R, mat_mul(inertia_matrix(iv.I), transpose(R)))
    ev = sym_eig(Ic)
    e = close(ev, sorted(box_inertia(3.0, 0.2, 0.3, 0.4)), 1e-15, "free_box principal moments")
    report("  free_box: rotated inertia has eigenvalues %s (error %.2g)" % (", ".join("%.6g" % x for x in ev), e))
    return ok


# --------------------------------------------------------------------------- --check


FORBIDDEN = ("visual", "collision", "mesh", "material", "transmission", "gazebo", "contact", "geometry")


DRAWING = ("visual", "geometry", "material", "color", "sphere", "cylinder", "box")


def check_file_generic(path, report, visuals=False):
    """Well-formed, one root, unique names, every joint's links exist, a tree, no meshes; visuals:
    primitive shapes (sphere, cylinder, box) with a colour are allowed."""
    ok = True
    try:
        root = strip_ns(ET.parse(path).getroot())
    except ET.ParseError as e:
        report("  FAIL %s: not well-formed: %s" % (path, e))
        return False
    for e in root.iter():
        if isinstance(e.tag, str) and e.tag in FORBIDDEN and not (visuals and e.tag in DRAWING):
            report("  FAIL %s: contains <%s>" % (path, e.tag))
            ok = False
    _, items, _ = parse_urdf(path)
    links, joints, children, roots = tree_info(items)
    names = [l.name for l in links]
    jnames = [j.name for j in joints]
    if len(set(names)) != len(names) or len(set(jnames)) != len(jnames):
        report("  FAIL %s: duplicate link or joint names" % path)
        ok = False
    if len(roots) != 1:
        report("  FAIL %s: %d root links %s" % (path, len(roots), roots))
        ok = False
    childs = [j.child for j in joints]
    if len(set(childs)) != len(childs):
        report("  FAIL %s: a link has two parent joints" % path)
        ok = False
    for j in joints:
        if j.parent not in names or j.child not in names:
            report("  FAIL %s: joint %s names a missing link" % (path, j.name))
            ok = False
        if j.type in ("revolute", "prismatic") and (j.limit is None or len(j.limit) != 4):
            report("  FAIL %s: joint %s: revolute/prismatic joint without a full <limit>" % (path, j.name))
            ok = False
        if j.type != "fixed" and j.axis is None:
            report("  FAIL %s: joint %s has no <axis>" % (path, j.name))
            ok = False
    if len(links) != len(joints) + 1:
        report("  FAIL %s: %d links, %d joints: not a tree" % (path, len(links), len(joints)))
        ok = False
    return ok


def check_robot(name, root, ref, report):
    """Our urdf/<name>.urdf against the published ref/urdf/<name>.urdf: the same physics to the bit."""
    ok = True
    ours_path = os.path.join(root, "urdf", name + ".urdf")
    ref_path = os.path.join(ref, "urdf", name + ".urdf")
    ok &= check_file_generic(ours_path, report, visuals=name in dict(PLANAR_WALKERS))
    rname, ritems, _ = parse_urdf(ref_path)
    oname, oitems, _ = parse_urdf(ours_path)

    def fail(msg):
        nonlocal ok
        ok = False
        report("  FAIL %s: %s" % (name, msg))

    if name == "romeo":
        # the two corrected izz are ours as documented; with the source's put back, the rest below
        # compares the file with the source (and Pinocchio's vectors) to the bit
        for k, it in oitems:
            fix = ROMEO_FIXED_IZZ.get(it.name) if k == "link" else None
            if fix is None:
                continue
            if not same_double(it.inertial.I["izz"], float(fix[2])):
                fail("%s izz %r, expected the corrected %s" % (it.name, it.inertial.I["izz"], fix[2]))
            it.inertial.I["izz"] = float(fix[1])

    if rname != oname:
        fail("robot name %s != %s" % (oname, rname))
    added = ADDED[name]
    added_links = {a[0] for a in added}
    added_joints = {a[1] for a in added}
    # same sequence of links / joints (element order), ours minus the added frames
    rseq = [(k, it.name) for k, it in ritems]
    oseq = [(k, it.name) for k, it in oitems if it.name not in (added_links if k == "link" else added_joints)]
    if rseq != oseq:
        fail("link/joint sequence differs from the reference")
    rl = {it.name: it for k, it in ritems if k == "link"}
    rj = {it.name: it for k, it in ritems if k == "joint"}
    nval = 0

    def cmp(what, a, b):
        nonlocal nval
        if len(a) != len(b) or not all(same_double(x, y) for x, y in zip(a, b)):
            fail("%s: %s != %s" % (what, a, b))
        nval += len(a)

    n_inertial = 0
    for k, it in oitems:
        if k == "link":
            if it.name in added_links:
                if it.inertial is not None:
                    fail("added link %s has an inertial" % it.name)
                continue
            r = rl.get(it.name)
            if r is None:
                fail("link %s not in the reference" % it.name)
                continue
            if (r.inertial is None) != (it.inertial is None):
                fail("link %s: inertial presence differs" % it.name)
                continue
            if r.inertial is None:
                continue
            n_inertial += 1
            a, b = it.inertial, r.inertial
            cmp("%s mass" % it.name, [a.mass], [b.mass])
            cmp("%s inertial xyz" % it.name, a.xyz, b.xyz)
            cmp("%s inertial rpy" % it.name, a.rpy, b.rpy)
            cmp("%s inertia" % it.name, [a.I[x] for x in INERTIA_KEYS], [b.I[x] for x in INERTIA_KEYS])
        else:
            if it.name in added_joints:
                spec = [a for a in added if a[1] == it.name][0]
                if not (it.type == "fixed" and it.parent == spec[2] and it.child == spec[0] and
                        it.xyz == [0.0] * 3 and it.rpy == [0.0] * 3):
                    fail("added joint %s is not fixed/zero-origin under %s" % (it.name, spec[2]))
                continue
            r = rj.get(it.name)
            if r is None:
                fail("joint %s not in the reference" % it.name)
                continue
            if (it.type, it.parent, it.child) != (r.type, r.parent, r.child):
                fail("joint %s: type/parent/child differ" % it.name)
            cmp("%s origin xyz" % it.name, it.xyz, r.xyz)
            cmp("%s origin rpy" % it.name, it.rpy, r.rpy)
            if (it.axis is None) != (r.axis is None):
                fail("joint %s: axis presence differs" % it.name)
            elif it.axis is not None:
                cmp("%s axis" % it.name, it.axis, r.axis)
            for attr in ("limit", "dynamics"):
                a, b = getattr(it, attr), getattr(r, attr)
                if (a is None) != (b is None):
                    fail("joint %s: <%s> presence differs" % (it.name, attr))
                elif a is not None:
                    if [x[0] for x in a] != [x[0] for x in b]:
                        fail("joint %s: <%s> attributes differ" % (it.name, attr))
                    cmp("%s %s" % (it.name, attr), [x[1] for x in a], [x[1] for x in b])
    # depth-first orders of the movable joints: file order and name order (Pinocchio)
    for by_name in (False, True):
        if dfs_movable(oitems, by_name) != dfs_movable(ritems, by_name):
            fail("depth-first joint order (%s) differs" % ("by name" if by_name else "file order"))
    vec = os.path.join(ref, "vectors", name + ".json")
    vec_note = ""
    if os.path.exists(vec):
        import json
        with open(vec) as f:
            d = json.load(f)
        vj = [j["name"] for j in d["joints"]][1:]
        if dfs_movable(oitems, True) != vj:
            fail("name-ordered depth-first joint order differs from vectors/%s.json" % name)
        same_file_order = dfs_movable(oitems, False) == vj
        vec_note = "; joint order = vectors/%s.json (%s)" % (
            name, "file order and name order agree" if same_file_order else
            "name-sorted siblings only; file-order DFS differs")
        _, _, _, _, mass, _ = summary(oitems)
        if abs(mass - d["total_mass"]) > 1e-12:
            fail("total mass %r != vectors total_mass %r" % (mass, d["total_mass"]))
        # end to end: the joint block of Pinocchio's M (independent of the base pose in its
        # local free-flyer coordinates) and the frame placements, from our file alone
        mech = Mech(oitems)
        idx = {j["name"]: j["idx_v"] for j in d["joints"]}
        order = [j.name for j in mech.order if j.type != "fixed"]
        eM = ef = 0.0
        for smp in d["samples"]:
            q = {n: smp["q"][7 + k] for k, n in enumerate(vj)}
            M = mech.mass_matrix(q)
            for a, na in enumerate(order):
                for b, nb in enumerate(order):
                    eM = max(eM, abs(M[a][b] - smp["M"][idx[na]][idx[nb]]))
            pose, _ = mech.fk(q)
            x, y, z, w = smp["q"][3:7]
            Rb = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
            frames = smp["frames"]
            fl = frames.items() if isinstance(frames, dict) else [(f["name"], f) for f in frames]
            for fname, f in fl:
                targets = [fname] + [a[0] for a in added if a[2] == fname]
                for t in targets:
                    R, pl = pose[t]
                    pw = add(mat_vec(Rb, pl), smp["q"][0:3])
                    Rw = mat_mul(Rb, R)
                    ef = max(ef, max(abs(u - v) for u, v in zip(pw, f["translation"])),
                             max(abs(Rw[i][j] - f["rotation"][i][j]) for i in range(3) for j in range(3)))
        if eM > 1e-12 or ef > 1e-12:
            fail("Pinocchio M joint block error %.3g, frame placement error %.3g" % (eM, ef))
        vec_note += ("\n    vs Pinocchio on %d samples: joint block of M max error %.2g, frames %s (and the "
                     "added frames on them) placement max error %.2g" %
                     (len(d["samples"]), eM, " ".join(f if isinstance(f, str) else f["name"] for f in
                                                      (d["frame_names"])), ef))
    for f in CONTACT_FRAMES[name]:
        if f not in {it.name for k, it in oitems if k == "link"}:
            fail("contact frame %s missing" % f)
    links, joints, types, dof, mass, roots = summary(oitems)
    # inertia sanity (report, not fail): PD and triangle inequality
    odd = []
    for l in links:
        if l.inertial is None or l.inertial.mass == 0.0 or l.inertial.point:
            continue   # point masses (no <inertia>) have zero inertia by definition
        pd, tri, e = inertia_ok(inertia_matrix(l.inertial.I))
        if not pd or not tri:
            odd.append("%s (%s)" % (l.name, "not PD" if not pd else "triangle inequality fails by %.3g" %
                                    (e[2] - e[0] - e[1])))
    report("  %s: %d links (%d with <inertial>), %d joints %s, DOF %d, total mass %r kg, root %s" %
           (name, len(links), n_inertial, len(joints),
            "(" + ", ".join("%d %s" % (types[t], t) for t in sorted(types)) + ")", dof, mass, roots[0]))
    report("    %d numbers bit-identical to %s (masses, inertial frames, inertias, "
           "joint origins, axes, limits, dynamics)%s%s" % (nval, os.path.relpath(ref_path, root),
                                                          " but the corrected izz of %s" % " and ".join(
                                                              ROMEO_FIXED_IZZ) if name == "romeo" else "",
                                                          vec_note))
    if added:
        report("    added frames: %s" % ", ".join("%s (fixed %s under %s)" % a for a in added))
    report("    contact frames present: %s" % " ".join(CONTACT_FRAMES[name]))
    if odd:
        report("    inertias of the source that are not physical: %s" % "; ".join(odd))
    return ok


def check_walker(root, report):
    path = os.path.join(root, "urdf", "passive_walker.urdf")
    ok = check_file_generic(path, report, visuals=True)
    _, items, _ = parse_urdf(path)
    mech = Mech(items)
    links = {it.name: it for k, it in items if k == "link"}
    pose, _ = mech.fk({"hip": 0.0})
    p = PW
    exp = {"left_foot": [0.0, 0.0, 0.0], "right_foot": [0.0, -p["w"], 0.0],
           "right_hip": [0.0, -p["w"] / 2, p["l"]]}
    for ln, x in exp.items():
        if max(abs(a - b) for a, b in zip(pose[ln][1], x)) > 1e-15:
            ok = False
            report("  FAIL passive_walker: %s at %s, expected %s" % (ln, pose[ln][1], x))
    # legs: COM and inertia as the parameter file
    coms = [b[1] for b in mech.bodies(pose)]
    mass = sum(b[0] for b in mech.bodies(pose))
    lI = links["left_leg"].inertial.I
    rI = links["right_leg"].inertial.I
    mirrored = all(same_double(lI[k], -rI[k] if k in ("ixy", "iyz") else rI[k]) for k in INERTIA_KEYS)
    ok &= mirrored
    report("  passive_walker: total mass %r, leg COMs at q=0 %s, right leg = left mirrored in y: %s, "
           "feet at %s / %s" % (mass, [[round(c, 12) for c in x] for x in coms], mirrored,
                                pose["left_foot"][1], pose["right_foot"][1]))
    # the hip axis is the same line for both legs: a hip rotation leaves right_hip in place
    pose2, _ = mech.fk({"hip": 0.8})
    d = max(abs(a - b) for a, b in zip(pose2["right_hip"][1], pose["right_hip"][1]))
    rf = pose2["right_foot"][1]
    want = [-p["l"] * math.sin(0.8), -p["w"], p["l"] - p["l"] * math.cos(0.8)]
    e = max(abs(a - b) for a, b in zip(rf, want))
    ok &= d < 1e-15 and e < 1e-14
    report("  passive_walker: hip q = 0.8 moves right_foot to %s (expected (-l sin q, -w, l(1 - cos q)), "
           "error %.2g)" % ([round(x, 12) for x in rf], e))
    return ok


def check_planar_walkers(root, report):
    """The compass gait and the rimless wheel from their parameters alone: masses, where the point
    masses and the feet are, the spoke angles."""
    ok = True
    _, items, _ = parse_urdf(os.path.join(root, "urdf", "compass_gait.urdf"))
    for k, it in items:   # the hip at the origin: the planar root held at q = 0
        if k == "joint" and it.type == "planar":
            it.type = "fixed"
    mech = Mech(items)
    mass = sum(b[0] for b in mech.bodies(mech.fk({"hip_pin": 0.0})[0]))
    pose, _ = mech.fk({"hip_pin": 0.6})
    l = CG["a"] + CG["b"]
    foot = add(pose["right_leg"][1], mat_vec(pose["right_leg"][0], [0.0, 0.0, -l]))
    want = [-l * math.sin(0.6), 0.0, -l * math.cos(0.6)]
    e = max(abs(x - y) for x, y in zip(foot, want))
    ok &= mass == CG["mH"] + 2 * CG["m"] and e < 1e-15
    report("  compass_gait: total mass %r kg, right foot at hip_pin = 0.6: %s (expected (-l sin q, 0, -l cos q), "
           "error %.2g)" % (mass, [round(x, 12) for x in foot], e))
    _, items, _ = parse_urdf(os.path.join(root, "urdf", "rimless_wheel.urdf"))
    joints = [it for k, it in items if k == "joint"]
    angles = [j.rpy[1] for j in joints]
    hub = [it for k, it in items if k == "link" and it.name == "hub"][0].inertial
    good = angles == rw_spoke_angles() and len(joints) == RW["n"] and hub.mass == RW["m"] and \
        all(hub.I[k] == (RW["I"] if k in ("ixx", "iyy", "izz") else 0.0) for k in INERTIA_KEYS)
    ok &= good
    report("  rimless_wheel: %d spokes at %s rad, hub mass %r kg, inertia %r kg m^2: %s" %
           (len(joints), " ".join(num(a) for a in angles), hub.mass, hub.I["iyy"], "as the parameters" if good else
            "FAIL: not the parameters"))
    return ok


def check(root, ref):
    """ref None (../shared/reference absent): the models written from the script's own parameters
    only; the robots' files are checked for structure, not against their sources."""
    lines = []

    def report(s):
        lines.append(s)
        print(s)

    ok = True
    if ref is not None:
        report("robot models (urdf/) against %s/urdf:" % os.path.relpath(ref, root))
        for name in ROBOTS:
            ok &= check_robot(name, root, ref, report)
    else:
        report("robot models (urdf/): structure only")
        for name in ROBOTS:
            ok &= check_file_generic(os.path.join(root, "urdf", name + ".urdf"), report)
    report("passive walker:")
    ok &= check_walker(root, report)
    report("compass gait and rimless wheel:")
    ok &= check_planar_walkers(root, report)
    if ref is not None:
        for name, _ in PLANAR_WALKERS:
            ok &= check_robot(name, root, ref, report)
    else:
        for name, _ in PLANAR_WALKERS:
            ok &= check_file_generic(os.path.join(root, "urdf", name + ".urdf"), report, visuals=True)
    report("test models (tests/models/):")
    for b in TEST_MODELS:
        name = b()[0]
        ok &= check_file_generic(os.path.join(root, "tests", "models", name + ".urdf"), report)
    ok &= check_test_models(root, report)
    # the files on disk are exactly what the generator writes now
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            generate(tmp, ref)
        stale = []
        own = (ROBOTS if ref is not None else []) + ["passive_walker"] + [n for n, _ in PLANAR_WALKERS]
        files = [os.path.join("urdf", n + ".urdf") for n in own] + \
            [os.path.join("tests", "models", b()[0] + ".urdf") for b in TEST_MODELS]
        for f in files:
            with open(os.path.join(tmp, f)) as f1, open(os.path.join(root, f)) as f2:
                if f1.read() != f2.read():
                    stale.append(f)
        if stale:
            ok = False
            report("FAIL: files differ from a fresh generation: %s" % " ".join(stale))
        else:
            report("all %d files are identical to a fresh generation" % len(files))
    report("check: %s" % ("OK" if ok else "FAILED"))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="verify the written files instead of writing them")
    ap.add_argument("--root", default=ROOT, help="repository root")
    ap.add_argument("--ref", default=None, help="reference directory (default $MBS_SHARED_REFERENCE, else "
                    "<root>/../shared/reference)")
    a = ap.parse_args()
    ref = a.ref or shared_reference(a.root)
    if a.check:
        sys.exit(0 if check(a.root, ref) else 1)
    generate(a.root, ref)


if __name__ == "__main__":
    main()
