#!/usr/bin/env python3
"""The Python package (python/mbs, ctypes over libmbs.so, Debian's numpy): the dynamics identities
on Solo (rnea(aba(q, v, τ)) = τ to 1e-9, M from crba, aba_derivatives' M⁻¹ and minverse's, integrate/difference),
simulate() against ./sim's own run, a Simulator stepped with a controller written in Python, its
step_derivatives() against central differences of its step() (Solo in the air and standing), and
errors raised with the library's message. MBS_LIBRARY names the libmbs.so to load, MBS_SIM the
./sim to compare with; MBS_PRELOAD (sanitizer builds) the runtimes to preload.

    MBS_LIBRARY=build/libmbs.so MBS_SIM=./sim /usr/bin/python3 tests/test_python.py
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.environ.get("MBS_PRELOAD") and os.environ.get("LD_PRELOAD") != os.environ["MBS_PRELOAD"]:
    # a sanitized library needs its runtimes loaded first; Python itself leaks by design
    env = dict(os.environ, LD_PRELOAD=os.environ["MBS_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import mbs  # noqa: E402
from pycheck import check, finish  # noqa: E402



def raises(fn, needle):
    try:
        fn()
    except mbs.Error as e:
        return needle in str(e)
    return False


def fd_step_jacobians(s, h=1e-6):
    """(A, B) of one s.step() by central differences taken from Python in the tangent space: the state
    (integrate(q, δq), v + δv) written with the contacts held (set_state(hold_contacts=True)) after a
    restore_state of the start, the result as (difference(q⁺, ·), v − v⁺)."""
    saved = s.save_state()
    q0, v0, tau0 = s.q.copy(), s.v.copy(), s.tau.copy()
    nv = s.nv
    s.step()
    q1, v1 = s.q.copy(), s.v.copy()

    def outcome(dx, dtau):
        s.restore_state(saved)
        s.set_state(s.integrate(q0, dx[:nv]), v0 + dx[nv:], hold_contacts=True)
        s.tau[:] = tau0 + dtau
        s.step()
        return np.concatenate([s.difference(q1, s.q), s.v - v1])

    A, B = np.empty((2 * nv, 2 * nv)), np.empty((2 * nv, nv))
    zx, zt = np.zeros(2 * nv), np.zeros(nv)
    for j in range(2 * nv):
        e = zx.copy()
        e[j] = h
        A[:, j] = (outcome(e, zt) - outcome(-e, zt)) / (2 * h)
    for j in range(nv):
        e = zt.copy()
        e[j] = h
        B[:, j] = (outcome(zx, e) - outcome(zx, -e)) / (2 * h)
    s.restore_state(saved)
    return A, B


def check_step_derivatives():
    """step_derivatives() against central differences of step() from Python, Solo in the air and
    standing (settled by expo, then one step of the scheme to place its anchors); 1e-5 relative to
    the largest entry. All three answer analytically (expo takes differences of a step its chain
    rule does not cover); nmdp, by forward differences, refuses "analytical"."""
    over = {"stepper.dt": 0.001, "controller.dt": 0.001}
    rng = np.random.default_rng(3)
    settled = mbs.Simulator("scenarios/solo_trot.ini", over)
    q_ref = settled.q.copy()

    def pd(s):
        s.tau[:6] = 0
        s.tau[6:] = 3.0 * (q_ref[7:] - s.q[7:]) - 0.1 * s.v[6:]

    for _ in range(300):
        pd(settled)
        settled.step()
    for where in ("air", "standing"):
        for scheme in ("euler", "symplectic_euler", "expo"):
            s = mbs.Simulator("scenarios/solo_trot.ini", dict(over, **{"stepper.name": scheme}))
            if where == "air":
                q = s.q.copy()
                q[2] += 0.3
                s.set_state(q, rng.uniform(-0.2, 0.2, s.nv))
            else:
                s.set_state(settled.q, settled.v)
                pd(s)
                s.step()
            pd(s)
            s.tau[6:] += rng.uniform(-0.5, 0.5, 12)
            active = s.contact_forces()[1]
            A, B = s.step_derivatives()
            state = (s.q.copy(), s.v.copy(), s.t)
            Af, Bf = fd_step_jacobians(s)
            ea, eb = np.abs(A - Af).max() / np.abs(Af).max(), np.abs(B - Bf).max() / np.abs(Bf).max()
            print("  step_derivatives %-16s %-8s (%d contacts active, %s): A %.1e, B %.1e relative to step()'s "
                  "central differences" % (scheme, where, active.sum(),
                                           "analytical" if s.has_analytical_derivatives else "forward differences",
                                           ea, eb))
            check(A.shape == (2 * s.nv, 2 * s.nv) and B.shape == (2 * s.nv, s.nv), "shapes %s %s" % (A.shape, B.shape))
            check(active.all() == (where == "standing") and active.any() == (where == "standing"),
                  "%s %s: active contacts %s" % (scheme, where, active))
            check(ea < 1e-5 and eb < 1e-5, "%s %s: step_derivatives vs central differences of step(): A %.2e, B %.2e"
                  % (scheme, where, ea, eb))
            check(s.has_analytical_derivatives, "%s: has_analytical_derivatives" % scheme)
            A2, B2 = s.step_derivatives("central", cols=[6, 17])
            check(np.array_equal(state[0], s.q) and np.array_equal(state[1], s.v) and state[2] == s.t,
                  "step_derivatives changed the state")
            check(B2.shape == (2 * s.nv, 2) and np.abs(B2 - Bf[:, [6, 17]]).max() < 1e-5 * np.abs(Bf).max(),
                  "%s %s: B's columns 6 and 17, central" % (scheme, where))
    fd = mbs.Simulator("scenarios/solo_trot.ini", dict(over, **{"stepper.name": "nmdp"}))
    check(not fd.has_analytical_derivatives and raises(lambda: fd.step_derivatives("analytical"), "FORWARD"),
          "analytical asked of nmdp raises")
    check(raises(lambda: s.step_derivatives(cols=[s.nv]), "cols[0]"), "a column out of range raises")


def check_optimize():
    """Simulator.optimize: iLQR from Python on Solo in the air (symplectic Euler at 5 ms, 20 knots),
    the joints driven to new angles: converged, the cost down, the plan's last state near the target,
    the simulator's state untouched."""
    s = mbs.Simulator("scenarios/solo_trot.ini", {"stepper.name": "symplectic_euler", "stepper.dt": 0.005,
                                                   "controller.dt": 0.005})
    q = s.q.copy()
    q[2] += 0.3
    s.set_state(q, np.zeros(s.nv))
    before = (s.q.copy(), s.v.copy(), s.t)
    target = q.copy()
    target[7:] += 0.3
    Q, Qf = np.zeros(2 * s.nv), np.zeros(2 * s.nv)
    Q[6:18], Qf[6:18], Qf[24:36] = 10, 1000, 1
    out = s.optimize(20, Q, np.full(12, 1e-2), Qf, q_ref=target, lo=np.full(12, -2.0), hi=np.full(12, 2.0))
    err = np.abs(out["q"][-1][7:] - target[7:]).max()
    print("  optimize: cost %.4g -> %.4g in %d iterations, last state %.3f rad from the target"
          % (out["cost_start"], out["cost"], out["iterations"], err))
    check(out["converged"] and out["cost"] < 0.1 * out["cost_start"], "optimize: not converged or the cost barely fell")
    check(out["u"].shape == (20, 12) and out["K"].shape == (20, 12, 36) and out["q"].shape == (21, 19), "optimize: shapes")
    check(np.abs(out["u"]).max() <= 2.0 + 1e-12, "optimize: a control outside its limits")
    check(err < 0.05, "optimize: the plan ends %.3f rad from the target" % err)
    check(np.array_equal(before[0], s.q) and np.array_equal(before[1], s.v) and before[2] == s.t,
          "optimize changed the state")


def main():
    os.chdir(ROOT)
    m = mbs.Model("urdf/solo12.urdf")
    check((m.nq, m.nv) == (19, 18) and m.joint_names[0] == "root_joint" and "FL_FOOT" in m.frame_names,
          "solo: nq %d nv %d joints %s" % (m.nq, m.nv, m.joint_names[:2]))
    rng = np.random.default_rng(7)
    worst = [0.0] * 4
    for _ in range(5):
        q, v, tau = m.random_configuration(), rng.standard_normal(m.nv), rng.standard_normal(m.nv)
        a = m.aba(q, v, tau)
        worst[0] = max(worst[0], np.abs(m.rnea(q, v, a) - tau).max())
        M = m.crba(q)
        worst[1] = max(worst[1], np.abs(M @ a + m.rnea(q, v, np.zeros(m.nv)) - tau).max())
        ddq, dq, dv, minv = m.aba_derivatives(q, v, tau)
        worst[2] = max(worst[2], np.abs(minv @ M - np.eye(m.nv)).max() + np.abs(ddq - a).max())
        worst[2] = max(worst[2], np.abs(m.minverse(q) - minv).max())
        # ∂ddq/∂v by central differences (C order: row i is ddq_i)
        h, k = 1e-6, 7
        e = np.zeros(m.nv)
        e[k] = h
        fd = (m.aba(q, v + e, tau) - m.aba(q, v - e, tau)) / (2 * h)
        worst[3] = max(worst[3], np.abs(dv[:, k] - fd).max() / max(1.0, np.abs(fd).max()))
    check(worst[0] < 1e-9, "rnea(aba(q, v, tau)) - tau: %.3g" % worst[0])
    check(worst[1] < 1e-9, "M a + h - tau: %.3g" % worst[1])
    check(worst[2] < 1e-8, "aba_derivatives: M^-1 M - I and ddq, minverse: %.3g" % worst[2])
    check(worst[3] < 1e-5, "d ddq / dv column against finite differences: %.3g" % worst[3])
    q0, v = m.random_configuration(), rng.standard_normal(m.nv)
    check(np.abs(m.difference(q0, m.integrate(q0, v)) - v).max() < 1e-9, "difference(q, integrate(q, v)) != v")
    R, p = m.frame_placement("FL_FOOT", m.neutral())
    check(np.allclose(R, np.eye(3)) and abs(p[2] + 0.32) < 0.02, "FL_FOOT at neutral: %s" % p)
    check(raises(lambda: mbs.Model("no/such.urdf"), "no/such.urdf"), "a missing URDF raises with its path")
    # every loader warning reaches Python whole (30 links of impossible inertia, ~4 KB of text)
    import tempfile
    bad = "".join("<link name='l%02d'><inertial><mass value='1'/><inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' "
                  "izz='3'/></inertial></link>" % i + ("<joint name='j%02d' type='revolute'><parent link='l%02d'/>"
                                                       "<child link='l%02d'/></joint>" % (i, i - 1, i) if i else "")
                  for i in range(30))
    with tempfile.NamedTemporaryFile("w", suffix=".urdf") as f:
        f.write("<robot name='r'>%s</robot>" % bad)
        f.flush()
        w = mbs.Model(f.name).warnings
    check(len(w) == 30 and all(x.endswith("3)") and "l%02d" % i in x for i, x in enumerate(w)),
          "%d warnings from Python: %s" % (len(w), w[-1:]))
    check(raises(lambda: m.frame_placement("nope", m.neutral()), "nope"), "an unknown frame raises")
    # armature: the rotor inertias land on M's diagonal and in ABA
    ma = mbs.Model("urdf/solo12.urdf")
    check(ma.joint_types[:2] == ["free-flyer", "revolute"] and not ma.armature.any() and ma.keyframes == {},
          "solo: joint types %s, armature %s" % (ma.joint_types[:2], ma.armature[:3]))
    ma.set_armature("FL_KFE", 0.0123)
    q, v, tau = ma.random_configuration(), rng.standard_normal(ma.nv), rng.standard_normal(ma.nv)
    arm = ma.armature
    k = int(np.nonzero(arm)[0][0])
    M0, Ma = m.crba(q), ma.crba(q)
    check(abs(arm[k] - 0.0123) < 1e-15 and np.abs(Ma - M0 - np.diag(arm)).max() < 1e-12, "armature on M's diagonal")
    a = ma.aba(q, v, tau)
    check(np.abs(Ma @ a + ma.rnea(q, v, np.zeros(ma.nv)) - tau).max() < 1e-9 and np.abs(ma.rnea(q, v, a) - tau).max() < 1e-9,
          "ABA and RNEA with armature")
    check(raises(lambda: ma.set_armature("nope", 1.0), "nope"), "an unknown joint raises")
    # an MJCF model: the ball joint and the keyframe in Python
    mb = mbs.Model("tests/models/mjcf/ball.xml")
    check("ball" in mb.joint_types and mb.keyframes, "ball.xml: joint types %s, keyframes %s" % (mb.joint_types, list(mb.keyframes)))
    q, v, tau = mb.random_configuration(), rng.standard_normal(mb.nv), rng.standard_normal(mb.nv)
    a = mb.aba(q, v, tau)
    check(np.abs(mb.rnea(q, v, a) - tau).max() < 1e-9, "ball.xml: rnea(aba) - tau")
    check(np.abs(mb.difference(q, mb.integrate(q, v)) - v).max() < 1e-9, "ball.xml: difference(integrate)")

    # simulate() is ./sim's run
    summary, traj = mbs.simulate("scenarios/solo_trot.ini", {"run.duration": 1})
    sim = os.path.abspath(os.environ.get("MBS_SIM", os.path.join(ROOT, "sim")))
    out = subprocess.run([sim, "scenarios/solo_trot.ini", "--set", "run.duration=1", "--quiet"], capture_output=True,
                         text=True, timeout=600).stdout
    ref = dict(l.split(": ", 1) for l in out.strip().split("\n"))
    check(summary["status"] == "stable" and ref.get("status") == "stable", "status %s / %s" % (summary.get("status"),
                                                                                               ref.get("status")))
    check("%.4f" % summary["distance_m"] == ref.get("distance_m"), "distance %s vs ./sim %s" % (summary["distance_m"],
                                                                                               ref.get("distance_m")))
    check(len(traj["t_s"]) == 501 and abs(traj["t_s"][-1] - 1) < 1e-12 and "FL_FOOT_fz_N" in traj,
          "trajectory: %d rows, columns %s" % (len(traj["t_s"]), list(traj)[:3]))
    check(raises(lambda: mbs.simulate("scenarios/solo_trot.ini", {"stepper.nope": 1}), "nope"),
          "an unknown key raises with its name")
    # the status is one word, its detail apart (as ./sim prints them)
    summary, _ = mbs.simulate("scenarios/solo_trot.ini", {"run.duration": 0.1, "run.max_velocity": 1e-3})
    check(summary["status"] == "diverged" and str(summary.get("status_detail")).startswith("at t = ")
          and "status_detail" not in ref,
          "diverged: status %r, status_detail %r" % (summary["status"], summary.get("status_detail")))

    # a controller in Python: the scenario's initial posture held by a joint PD
    s = mbs.Simulator("scenarios/solo_trot.ini")
    q_ref = s.q.copy()
    for _ in range(250):
        s.tau[:6] = 0
        s.tau[6:] = 3.0 * (q_ref[7:] - s.q[7:]) - 0.1 * s.v[6:]
        s.step()
    f, active = s.contact_forces()
    weight = 9.81 * 2.5   # about Solo's mass
    check(abs(s.t - 0.5) < 1e-12 and active.all() and 0.5 * weight < f[:, 2].sum() < 1.5 * weight,
          "standing under a Python PD: t %g, active %s, vertical force %.3g N" % (s.t, active, f[:, 2].sum()))
    check(abs(s.q[2] - q_ref[2]) < 0.03, "the base sank or rose: %.4f -> %.4f" % (q_ref[2], s.q[2]))
    # writing the state is a new start
    z = s.q[2]
    s.q[2] += 0.05
    s.v[:] = 0
    s.step()
    check(s.q[2] > z + 0.045, "a written state was not taken: z %.4f -> %.4f" % (z, s.q[2]))
    # save and restore: the periods after a restore are those after the save, bit for bit
    saved, t_saved = s.save_state(), s.t
    def rollout():
        for _ in range(20):
            s.tau[6:] = 3.0 * (q_ref[7:] - s.q[7:]) - 0.1 * s.v[6:]
            s.step()
        return s.q.copy(), s.v.copy(), s.t
    first = rollout()
    s.restore_state(saved)
    check(s.t == t_saved, "restore_state: t %r, saved at %r" % (s.t, t_saved))
    second = rollout()
    check(np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1]) and first[2] == second[2],
          "the periods after restore_state differ from those after save_state")
    check(raises(lambda: s.restore_state(saved[:-8]), "restore"), "a cut state raises")
    # a NaN written into the base's z is named as z (q[2]), not as the x it would spread to
    s.q[2] = float("nan")
    try:
        s.step()
        check(False, "a NaN in q[2]: no error")
    except mbs.Error as e:
        check("[2, z] = nan (q[2])" in str(e) and "given to the step" in str(e), "a NaN in q[2] is reported as: %s" % e)
    s.restore_state(saved)

    check_step_derivatives()
    check_optimize()

    # Batch: the same on 1 and 2 threads, bit for bit, and the same as the system stepped alone
    check(mbs.Batch is not None, "no mbs.Batch")
    if mbs.Batch is not None:
        finals = []
        for threads in (1, 2):
            b = mbs.Batch("scenarios/solo_trot.ini", 6, nthreads=threads)
            q_ref = b.q.copy()
            for _ in range(100):
                tau = np.zeros((b.n, b.nv))
                tau[:, 6:] = 3.0 * (q_ref[:, 7:] - b.q[:, 7:]) - 0.1 * b.v[:, 6:]
                b.set_tau(tau)
                b.step()
            finals.append((b.q, b.v, b.contact_forces()))
        check(all(np.array_equal(x, y) for x, y in zip(*finals)), "Batch on 1 and 2 threads differ")
        alone = mbs.Simulator("scenarios/solo_trot.ini")
        q_ref = alone.q.copy()
        for _ in range(100):
            alone.tau[:6] = 0
            alone.tau[6:] = 3.0 * (q_ref[7:] - alone.q[7:]) - 0.1 * alone.v[6:]
            alone.step()
        check(np.array_equal(finals[0][0][3], alone.q) and np.array_equal(finals[0][1][3], alone.v),
              "a batch's system differs from the same system stepped alone: %.3g" % np.abs(finals[0][0][3] - alone.q).max())
        check(finals[0][2].shape == (6, 4, 3) and abs(finals[0][2][0, :, 2].sum() - 24.5) < 5,
              "batch contact forces: shape %s, vertical %.3g N" % (finals[0][2].shape, finals[0][2][0, :, 2].sum()))
    finish("python")


if __name__ == "__main__":
    main()
