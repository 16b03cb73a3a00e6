"""mbs from Python: the engine's shared library (libmbs.so) through ctypes, numpy arrays in and out.

    import mbs
    m = mbs.Model("urdf/solo12.urdf")              # free-flyer root; floating=False: fixed
    q = m.neutral(); v = np.zeros(m.nv); tau = np.zeros(m.nv)
    ddq = m.aba(q, v, tau)                          # Pinocchio's conventions: q = [x y z qx qy qz qw, joints]
    summary, traj = mbs.simulate("scenarios/solo_trot.ini", {"stepper.dt": 0.001})
    sim = mbs.Simulator("scenarios/solo_trot.ini")  # a controller of your own: set sim.tau, call sim.step()
    A, B = sim.step_derivatives()                   # the step's Jacobians ∂x⁺/∂x, ∂x⁺/∂τ at the current state

Matrices are numpy arrays in C order (rows first), as numpy users expect; the library's are
column-major and are transposed on the way. Errors raise mbs.Error with the library's message.
The library is found at $MBS_LIBRARY, else in the source tree's build/ folder, else on the
system's library path (make install).
"""
import ctypes as C
import ctypes.util
import csv
import os
import tempfile

import numpy as np

__all__ = ["Error", "Model", "simulate", "Simulator", "Batch", "version"]


class Error(RuntimeError):
    """An error of the library: its message names the file, the line or the argument."""


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if os.environ.get("MBS_LIBRARY"):
        candidates.append(os.environ["MBS_LIBRARY"])
    candidates.append(os.path.join(here, "..", "..", "build", "libmbs.so"))
    try:   # where make install put it
        from ._installed import LIBRARY
        candidates.append(LIBRARY)
    except ImportError:
        pass
    found = ctypes.util.find_library("mbs")
    if found:
        candidates.append(found)
    candidates.append("libmbs.so.0")
    errors = []
    for c in candidates:
        try:
            return C.CDLL(c)
        except OSError as e:
            errors.append("%s: %s" % (c, e))
    raise ImportError("mbs: cannot load libmbs.so (build it with `make`, or set MBS_LIBRARY):\n  " +
                      "\n  ".join(errors))


_lib = _load()
_dp = C.POINTER(C.c_double)
_vp = C.c_void_p


class _ErrorRecord(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 512), ("nwarnings", C.c_int), ("warnings", _vp),
                ("warnings_len", C.c_size_t)]

    def __del__(self):   # the warnings text is on the library's heap, owned by a record Python made
        if self._b_needsfree_ and self.warnings:
            _lib.mbs_error_free(C.byref(self))


class _UrdfOptions(C.Structure):
    _fields_ = [("floating_base", C.c_int), ("strict", C.c_int), ("bound_mass", C.c_double),
                ("bound_inertia", C.c_double)]


class _RunOptions(C.Structure):
    _fields_ = [("csv", C.c_char_p), ("progress", _vp), ("user", _vp), ("html", C.c_char_p),
                ("checkpoint", C.c_char_p), ("checkpoint_every", C.c_double), ("resume", C.c_char_p),
                ("contact_event", _vp)]


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_version = _fn("mbs_version", C.c_char_p)
_model_from_urdf = _fn("mbs_model_from_urdf", _vp, C.c_char_p, C.POINTER(_UrdfOptions), C.POINTER(_ErrorRecord))
_model_free = _fn("mbs_model_free", None, _vp)
_model_from_urdf_string = _fn("mbs_model_from_urdf_string", _vp, C.c_char_p, C.c_char_p, C.POINTER(_UrdfOptions),
                              C.POINTER(_ErrorRecord))
_model_from_mjcf = _fn("mbs_model_from_mjcf", _vp, C.c_char_p, C.c_void_p, C.POINTER(_ErrorRecord))
_data_new = _fn("mbs_data_new", _vp, _vp)
_data_free = _fn("mbs_data_free", None, _vp)
_nq = _fn("mbs_model_nq", C.c_int, _vp)
_nv = _fn("mbs_model_nv", C.c_int, _vp)
_njoints = _fn("mbs_model_njoints", C.c_int, _vp)
_joint_name = _fn("mbs_joint_name", C.c_char_p, _vp, C.c_int)
_nframes = _fn("mbs_model_nframes", C.c_int, _vp)
_joint_type = _fn("mbs_joint_type_of", C.c_int, _vp, C.c_int)
_joint_idx_v = _fn("mbs_joint_idx_v", C.c_int, _vp, C.c_int)
_joint_nv = _fn("mbs_joint_nv", C.c_int, _vp, C.c_int)
_armature = _fn("mbs_model_armature", _dp, _vp)
_set_armature = _fn("mbs_model_set_armature", None, _vp, C.c_int, _dp)
_nkeyframes = _fn("mbs_model_nkeyframes", C.c_int, _vp)
_keyframe = _fn("mbs_model_keyframe", C.c_char_p, _vp, C.c_int, C.POINTER(_dp), C.POINTER(_dp))
_frame_name = _fn("mbs_frame_name", C.c_char_p, _vp, C.c_int)
_frame_id = _fn("mbs_frame_id", C.c_int, _vp, C.c_char_p)
_neutral = _fn("mbs_neutral", None, _vp, _dp)
_random = _fn("mbs_random_configuration", None, _vp, C.POINTER(C.c_ulonglong), _dp)
_integrate = _fn("mbs_integrate", None, _vp, _dp, _dp, _dp)
_difference = _fn("mbs_difference", None, _vp, _dp, _dp, _dp)
_rnea = _fn("mbs_rnea", None, _vp, _vp, _dp, _dp, _dp, _dp)
_aba = _fn("mbs_aba", None, _vp, _vp, _dp, _dp, _dp, _dp)
_crba = _fn("mbs_crba", None, _vp, _vp, _dp, _dp)
_minverse = _fn("mbs_minverse", C.c_int, _vp, _vp, _dp, _dp)
_aba_derivatives = _fn("mbs_aba_derivatives", None, _vp, _vp, _dp, _dp, _dp, _dp, _dp, _dp, _dp)
_frame_placement = _fn("mbs_compute_frame_placement", None, _vp, _vp, _dp, C.c_int, _dp, _dp)
_scenario_load = _fn("mbs_scenario_load", _vp, C.c_char_p, C.POINTER(C.c_char_p), C.c_int, C.POINTER(_ErrorRecord))
_scenario_free = _fn("mbs_scenario_free", None, _vp)
_scenario_model = _fn("mbs_scenario_model", _vp, _vp)
_scenario_dt = _fn("mbs_scenario_controller_dt", C.c_double, _vp)
_sim_new = _fn("mbs_sim_new", _vp, _vp, C.POINTER(_ErrorRecord))
_sim_free = _fn("mbs_sim_free", None, _vp)
_sim_run = _fn("mbs_sim_run", C.c_int, _vp, C.POINTER(_RunOptions), _vp, C.POINTER(_ErrorRecord))
_sim_step = _fn("mbs_sim_step", C.c_int, _vp, C.c_int, C.POINTER(_ErrorRecord))
_sim_system = _fn("mbs_sim_system", _vp, _vp)
_sim_stepper = _fn("mbs_sim_stepper", _vp, _vp)
_stepper_state_size = _fn("mbs_stepper_state_size", C.c_size_t, _vp)
_stepper_save = _fn("mbs_stepper_save", C.c_int, _vp, C.c_void_p, C.c_size_t, C.POINTER(_ErrorRecord))
_stepper_restore = _fn("mbs_stepper_restore", C.c_int, _vp, C.c_void_p, C.c_size_t, C.POINTER(_ErrorRecord))
_summary_format = _fn("mbs_sim_summary_format", C.c_int, _vp, C.c_char_p, C.c_size_t)
_summary_size = _fn("mbs_sim_summary_size", C.c_size_t)
# mbs_control_callback: (user, t, q, v, tau)
_CONTROL = C.CFUNCTYPE(None, _vp, C.c_double, C.POINTER(C.c_double), C.POINTER(C.c_double), C.POINTER(C.c_double))
_sim_set_control = _fn("mbs_sim_set_control", None, _vp, _CONTROL, _vp)
_system_set_impedance = _fn("mbs_system_set_impedance", None, _vp, _dp, _dp, _dp, _dp)
_system_q = _fn("mbs_system_q", _dp, _vp)
_system_v = _fn("mbs_system_v", _dp, _vp)
_system_tau = _fn("mbs_system_tau", _dp, _vp)
_system_time = _fn("mbs_system_time", C.c_double, _vp)
_system_set_state = _fn("mbs_system_set_state", None, _vp, _dp, _dp, C.c_double)
_system_ncontacts = _fn("mbs_system_ncontacts", C.c_int, _vp)
_scenario_stepper_dt = _fn("mbs_scenario_dt", C.c_double, _vp)
_stepper_derivatives = _fn("mbs_stepper_derivatives", C.c_int, _vp, C.c_double, C.c_int, C.POINTER(C.c_int), C.c_int,
                           _dp, _dp)
_stepper_last_error = _fn("mbs_stepper_last_error", C.POINTER(_ErrorRecord), _vp)
_stepper_has_analytical = _fn("mbs_stepper_has_analytical_derivatives", C.c_int, _vp)
_ilqr_new = _fn("mbs_ilqr_new", _vp, _vp, C.c_int, C.c_double, C.POINTER(C.c_int), C.c_int, C.POINTER(_ErrorRecord))
_ilqr_free = _fn("mbs_ilqr_free", None, _vp)
_ilqr_set_cost = _fn("mbs_ilqr_set_cost", C.c_int, _vp, _dp, _dp, _dp, _dp, _dp, _dp)
_ilqr_set_limits = _fn("mbs_ilqr_set_limits", C.c_int, _vp, _dp, _dp)
_ilqr_controls = _fn("mbs_ilqr_controls", _dp, _vp)
_ilqr_gains = _fn("mbs_ilqr_gains", _dp, _vp)
_ilqr_state = _fn("mbs_ilqr_state", None, _vp, C.c_int, _dp, _dp)
_ilqr_last_error = _fn("mbs_ilqr_last_error", C.POINTER(_ErrorRecord), _vp)


class _IlqrStats(C.Structure):
    _fields_ = [("iterations", C.c_int), ("cost_start", C.c_double), ("cost", C.c_double),
                ("regularization", C.c_double), ("alpha", C.c_double), ("converged", C.c_int)]


_ilqr_solve = _fn("mbs_ilqr_solve", C.c_int, _vp, C.c_int, C.c_double, C.POINTER(_IlqrStats))
# mbs_derivatives_method (mbs/step.h), by the words step_derivatives takes
_DERIVATIVES_METHOD = {"auto": 0, "analytical": 1, "forward": 2, "central": 3, "extrapolated": 4}


class _ContactInfo(C.Structure):
    _fields_ = [("name", C.c_char_p), ("frame", C.c_int), ("offset", C.c_double * 3), ("radius", C.c_double),
                ("axis", C.c_double * 3), ("active", C.c_int), ("off", C.c_int), ("slipping", C.c_int),
                ("position", C.c_double * 3), ("velocity", C.c_double * 3), ("normal", C.c_double * 3),
                ("depth", C.c_double), ("force", C.c_double * 3)]


_system_contact = _fn("mbs_system_contact", C.c_int, _vp, C.c_int, C.POINTER(_ContactInfo))


def version():
    """The library's version, e.g. '0.1.0'."""
    return _version().decode()


def _raise(err, what):
    msg = err.msg.decode(errors="replace") or what
    raise Error(msg)


def _vec(x, n, name):
    """x as a contiguous float64 array of n entries (a copy when it is not one already)."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError("%s: expected shape (%d,), got %s" % (name, n, a.shape))
    return a


def _ptr(a):
    return a.ctypes.data_as(_dp)


def _integrate_with(m, nq, nv, q, v):
    q, v = _vec(q, nq, "q"), _vec(v, nv, "v")
    out = np.empty(nq)
    _integrate(m, _ptr(q), _ptr(v), _ptr(out))
    return out


def _difference_with(m, nq, nv, q0, q1):
    q0, q1 = _vec(q0, nq, "q0"), _vec(q1, nq, "q1")
    out = np.empty(nv)
    _difference(m, _ptr(q0), _ptr(q1), _ptr(out))
    return out


_JOINT_TYPES = ("revolute", "prismatic", "free-flyer", "planar", "ball")


def _is_mjcf(path):
    """A file whose root element is <mujoco> (MJCF), by its first kilobytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"<mujoco" in head


class Model:
    """A robot model from a URDF or MuJoCo MJCF file (immutable) with its working data.

    floating (URDF only; an MJCF file says which bodies are free): True (a free-flyer root joint,
    'root_joint'), False (the root fixed to the world), or 'planar' (a planar root in the world
    x-z plane)."""

    def __init__(self, path, floating=True, strict=False, text=None):
        """text: the URDF's XML itself (path then only names the model in messages)."""
        err = _ErrorRecord()
        if text is not None:
            fb = 2 if floating == "planar" else (1 if floating else 0)
            opt = _UrdfOptions(fb, 1 if strict else 0, 0.0, 0.0)
            self._m = _model_from_urdf_string(text.encode(), os.fsencode(path), C.byref(opt), C.byref(err))
        elif _is_mjcf(path):
            self._m = _model_from_mjcf(os.fsencode(path), None, C.byref(err))
        else:
            fb = 2 if floating == "planar" else (1 if floating else 0)
            opt = _UrdfOptions(fb, 1 if strict else 0, 0.0, 0.0)
            self._m = _model_from_urdf(os.fsencode(path), C.byref(opt), C.byref(err))
        if not self._m:
            _raise(err, "cannot load " + str(path))
        text = C.string_at(err.warnings, err.warnings_len) if err.warnings else b""
        self.warnings = text.decode(errors="replace").strip().split("\n") if err.nwarnings else []
        self._d = _data_new(self._m)
        self.nq, self.nv = _nq(self._m), _nv(self._m)
        self.joint_names = [_joint_name(self._m, j).decode() for j in range(_njoints(self._m))]
        self.frame_names = [_frame_name(self._m, f).decode() for f in range(_nframes(self._m))]
        self.joint_types = [_JOINT_TYPES[_joint_type(self._m, j)] for j in range(len(self.joint_names))]
        self._seed = C.c_ulonglong(1)

    def __del__(self):
        if getattr(self, "_d", None):
            _data_free(self._d)
            self._d = None
        if getattr(self, "_m", None):
            _model_free(self._m)
            self._m = None

    @property
    def armature(self):
        """The rotor inertias on M's diagonal (nv; kg m² for revolute coordinates, kg for prismatic)."""
        return np.ctypeslib.as_array(_armature(self._m), shape=(self.nv,)).copy()

    def set_armature(self, joint, values):
        """Sets joint `joint`'s (name or index) armature: one value per velocity coordinate."""
        j = (self.joint_names.index(joint) if joint in self.joint_names else -1) if isinstance(joint, str) else int(joint)
        if not 0 <= j < len(self.joint_names):
            raise Error("no joint %r in the model" % (joint,))
        n = _joint_nv(self._m, j)
        a = _vec(np.broadcast_to(np.asarray(values, dtype=float), (n,)), n, "armature")
        _set_armature(self._m, j, _ptr(a))

    @property
    def keyframes(self):
        """The model's named states (MJCF <keyframe>): {name: (q, v)}."""
        out = {}
        for k in range(_nkeyframes(self._m)):
            q, v = _dp(), _dp()
            name = _keyframe(self._m, k, C.byref(q), C.byref(v)).decode()
            out[name] = (np.ctypeslib.as_array(q, shape=(self.nq,)).copy(), np.ctypeslib.as_array(v, shape=(self.nv,)).copy())
        return out

    def neutral(self):
        q = np.empty(self.nq)
        _neutral(self._m, _ptr(q))
        return q

    def random_configuration(self):
        """A random configuration within the joint limits (a seeded sequence, the same each run)."""
        q = np.empty(self.nq)
        _random(self._m, C.byref(self._seed), _ptr(q))
        return q

    def integrate(self, q, v):
        return _integrate_with(self._m, self.nq, self.nv, q, v)

    def difference(self, q0, q1):
        return _difference_with(self._m, self.nq, self.nv, q0, q1)

    def rnea(self, q, v, a):
        q, v, a = _vec(q, self.nq, "q"), _vec(v, self.nv, "v"), _vec(a, self.nv, "a")
        tau = np.empty(self.nv)
        _rnea(self._m, self._d, _ptr(q), _ptr(v), _ptr(a), _ptr(tau))
        return tau

    def aba(self, q, v, tau):
        q, v, tau = _vec(q, self.nq, "q"), _vec(v, self.nv, "v"), _vec(tau, self.nv, "tau")
        ddq = np.empty(self.nv)
        _aba(self._m, self._d, _ptr(q), _ptr(v), _ptr(tau), _ptr(ddq))
        return ddq

    def crba(self, q):
        q = _vec(q, self.nq, "q")
        M = np.empty((self.nv, self.nv))
        _crba(self._m, self._d, _ptr(q), _ptr(M))
        return M.T.copy()   # column-major from the library; symmetric anyway

    def minverse(self, q):
        """M(q)⁻¹, whole (nv x nv); raises Error when M is singular (a massless moving subtree)."""
        q = _vec(q, self.nq, "q")
        Minv = np.empty((self.nv, self.nv))
        if _minverse(self._m, self._d, _ptr(q), _ptr(Minv)) != 0:
            raise Error("mass matrix not positive definite at this q (a moving subtree without mass or inertia?)")
        return Minv   # symmetric: column- and row-major alike

    def aba_derivatives(self, q, v, tau):
        """(ddq, ∂ddq/∂q, ∂ddq/∂v, ∂ddq/∂τ = M⁻¹); ∂/∂q in the tangent space at q."""
        q, v, tau = _vec(q, self.nq, "q"), _vec(v, self.nv, "v"), _vec(tau, self.nv, "tau")
        n = self.nv
        ddq, dq, dv, dtau = np.empty(n), np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
        _aba_derivatives(self._m, self._d, _ptr(q), _ptr(v), _ptr(tau), _ptr(ddq), _ptr(dq), _ptr(dv), _ptr(dtau))
        return ddq, dq.T.copy(), dv.T.copy(), dtau.T.copy()

    def frame_placement(self, name, q):
        """(R, p): the world rotation (3x3) and position of frame `name` at q."""
        f = _frame_id(self._m, name.encode())
        if f < 0:
            raise Error("no frame '%s' in the model" % name)
        q = _vec(q, self.nq, "q")
        R, p = np.empty(9), np.empty(3)
        _frame_placement(self._m, self._d, _ptr(q), f, _ptr(R), _ptr(p))
        return R.reshape(3, 3).T.copy(), p


def _overrides(overrides):
    items = ["%s=%s" % (k, v) for k, v in (overrides or {}).items()]
    arr = (C.c_char_p * max(1, len(items)))(*[s.encode() for s in items])
    return arr, len(items)


def _load_scenario(path, overrides):
    arr, n = _overrides(overrides)
    err = _ErrorRecord()
    sc = _scenario_load(os.fsencode(path), arr, n, C.byref(err))
    if not sc:
        _raise(err, "cannot load " + str(path))
    return sc


def _summary_dict(text):
    out = {}
    for line in text.strip().split("\n"):
        k, _, v = line.partition(": ")
        try:
            out[k] = int(v) if v.lstrip("-").isdigit() else float(v)
        except ValueError:
            out[k] = v
    return out


class _ControlledSystem:
    """What simulate()'s control callable may do besides setting τ: hand the stepper a joint PD."""

    def __init__(self, system):
        self._s = system

    def set_impedance(self, kp, kd, q_ref):
        """τ = kp (q_ref − q) − kd q̇ on the one-coordinate joints, applied by the stepper at every step
        of the period (mbs_system_set_impedance; kp, kd: nv, q_ref: nq; None removes it)."""
        if kp is None:
            _system_set_impedance(self._s, None, None, None, None)
            return
        self._keep = [np.ascontiguousarray(x, dtype=np.float64) for x in (kp, kd, q_ref)]
        _system_set_impedance(self._s, *(_ptr(x) for x in self._keep), None)


def simulate(ini_path, overrides=None, control=None, html=None):
    """Runs a scenario as ./sim does, with overrides {"section.key": value}; returns (summary, trajectory):
    the summary as a dict (./sim's keys), the trajectory as a dict of numpy arrays keyed by CSV column
    (t_s, q_..., v_..., tau_..., contact forces). control: a callable control(t, q, v, tau, system) run
    at every controller period after the scenario's controller, as mbs_sim_set_control's callback: q,
    v are read-only views of the state, tau (nv) a writable view of the torque to hold, system has
    set_impedance(kp, kd, q_ref) for a PD the stepper applies at every step. html: the path of the
    replay page to write ("" or None: the scenario's [output] html, if any)."""
    sc = _load_scenario(ini_path, overrides)
    err = _ErrorRecord()
    sim = _sim_new(sc, C.byref(err))
    if not sim:
        _scenario_free(sc)
        _raise(err, "cannot make the simulation")
    fd, csv_path = tempfile.mkstemp(suffix=".csv", prefix="mbs_")
    os.close(fd)
    failure = []
    if control is not None:
        system = _ControlledSystem(_sim_system(sim))
        nq, nv = _nq(_scenario_model(sc)), _nv(_scenario_model(sc))

        def trampoline(_user, t, q, v, tau):
            if failure:
                return
            try:
                control(t, np.ctypeslib.as_array(q, (nq,)), np.ctypeslib.as_array(v, (nv,)),
                        np.ctypeslib.as_array(tau, (nv,)), system)
            except BaseException as e:   # an exception cannot cross the C frames: kept, raised after the run
                failure.append(e)
        callback = _CONTROL(trampoline)
        _sim_set_control(sim, callback, None)
    try:
        opt = _RunOptions(os.fsencode(csv_path), None, None, os.fsencode(html) if html else None)
        summary = C.create_string_buffer(_summary_size())   # an mbs_sim_summary, opaque here
        rc = _sim_run(sim, C.byref(opt), C.cast(summary, _vp), C.byref(err))
        if failure:
            raise failure[0]
        if rc != 0:
            _raise(err, "the run failed")
        text = C.create_string_buffer(8192)
        _summary_format(C.cast(summary, _vp), text, len(text))
        with open(csv_path, newline="") as f:
            rows = list(csv.reader(f))
        header, data = rows[0], np.array(rows[1:], dtype=np.float64).reshape(-1, len(rows[0]))
        traj = {name: data[:, k].copy() for k, name in enumerate(header)}
        return _summary_dict(text.value.decode()), traj
    finally:
        os.remove(csv_path)
        _sim_free(sim)
        _scenario_free(sc)


class Simulator:
    """A scenario stepped from Python, one controller period per step(): set `tau` (a writable view
    of the torque held during the next period), call step(), read `q`, `v` (writable views: a
    change is taken as a new state, as mbs_system_set_state) and `t`, and contact_forces().
    use_controller=True runs the scenario's own controller before each period instead."""

    def __init__(self, ini_path, overrides=None, use_controller=False):
        self._sc = _load_scenario(ini_path, overrides)
        err = _ErrorRecord()
        self._sim = _sim_new(self._sc, C.byref(err))
        if not self._sim:
            _scenario_free(self._sc)
            self._sc = None
            _raise(err, "cannot make the simulation")
        self._sys = _sim_system(self._sim)
        m = _scenario_model(self._sc)
        self.nq, self.nv = _nq(m), _nv(m)
        self.dt = _scenario_dt(self._sc)
        self.use_controller = use_controller
        self.q = np.ctypeslib.as_array(_system_q(self._sys), shape=(self.nq,))
        self.v = np.ctypeslib.as_array(_system_v(self._sys), shape=(self.nv,))
        self.tau = np.ctypeslib.as_array(_system_tau(self._sys), shape=(self.nv,))
        self._last = (self.q.copy(), self.v.copy())

    def __del__(self):
        if getattr(self, "_sim", None):
            _sim_free(self._sim)
            self._sim = None
        if getattr(self, "_sc", None):
            _scenario_free(self._sc)
            self._sc = None

    @property
    def t(self):
        return _system_time(self._sys)

    def _take_written_state(self):
        if not (np.array_equal(self.q, self._last[0]) and np.array_equal(self.v, self._last[1])):
            # the state was written from Python: a new start for the stepper
            q, v = self.q.copy(), self.v.copy()
            _system_set_state(self._sys, _ptr(q), _ptr(v), self.t)
            self._last = (self.q.copy(), self.v.copy())

    def step(self):
        """One controller period. Raises mbs.Error when the stepper fails (e.g. a state that is not finite)."""
        self._take_written_state()
        err = _ErrorRecord()
        if _sim_step(self._sim, 1 if self.use_controller else 0, C.byref(err)) != 0:
            _raise(err, "the step failed")
        self._last = (self.q.copy(), self.v.copy())

    @property
    def has_analytical_derivatives(self):
        """True when the scenario's stepper differentiates its step analytically (step_derivatives'
        method "auto" then is "analytical"), False when it takes finite differences."""
        return bool(_stepper_has_analytical(_sim_stepper(self._sim)))

    def step_derivatives(self, method="auto", cols=None):
        """The Jacobians of one step of the scenario's stepper ([stepper] dt) from the current state,
        without taking it: (A, B), A = ∂x⁺/∂x (2nv x 2nv), B = ∂x⁺/∂τ (2nv x len(cols); all nv
        columns when cols is None), numpy arrays in C order. x = (q, v) in the tangent space: a
        column of A is the step's answer to the state (integrate(q, δq), v + δv), its δq rows are
        difference(q⁺, ·) at the step's result; τ is `tau`, held over the step; the contacts'
        anchors and modes are held at their values now (hold_contacts in set_state does the same
        for a step of your own). When controller.dt = stepper.dt, as in scenarios/solo_trot.ini,
        a step is one period of step() without the scenario's controller.
        method: "auto" (analytical where the scheme's chain rule reaches, forward differences
        otherwise), "analytical" (central differences of a step the chain rule does not cover),
        "forward", "central" or "extrapolated" (central at h and h/2, Richardson, h shrunk
        while the estimates at h and h/8 disagree);
        cols: indices into v (e.g. the actuated joints).
        The state is left as it was. Raises mbs.Error with the library's message (a bad column,
        "analytical" asked of a scheme without, a step that fails).

            sim = mbs.Simulator("scenarios/solo_trot.ini", {"stepper.name": "symplectic_euler",
                                                            "stepper.dt": 0.001, "controller.dt": 0.001})
            A, B = sim.step_derivatives(cols=range(6, 18))   # the 12 joint torques' columns
        """
        if method not in _DERIVATIVES_METHOD:
            raise ValueError("step_derivatives: method %r: expected one of %s" % (method, ", ".join(_DERIVATIVES_METHOD)))
        self._take_written_state()
        n2 = 2 * self.nv
        idx = None if cols is None else np.ascontiguousarray(list(cols), dtype=np.intc)
        ncols = self.nv if idx is None else len(idx)
        A, B = np.empty((n2, n2)), np.empty((ncols, n2))   # column-major 2nv x ncols is C-order ncols x 2nv
        ip = None if idx is None or ncols == 0 else idx.ctypes.data_as(C.POINTER(C.c_int))
        st = _sim_stepper(self._sim)
        rc = _stepper_derivatives(st, _scenario_stepper_dt(self._sc), _DERIVATIVES_METHOD[method], ip, ncols, _ptr(A),
                                  _ptr(B) if ncols > 0 else None)
        if rc != 0:
            _raise(_stepper_last_error(st).contents, "step_derivatives failed")
        return A.T.copy(), B.T.copy()

    def optimize(self, horizon, Q, R, Qf, q_ref=None, v_ref=None, u_ref=None, controls=None, lo=None, hi=None,
                 warm_start=None, iterations=50, tol=1e-8):
        """Trajectory optimisation from the current state through the scenario's stepper at its dt
        (iLQR with box limits, mbs/ilqr.h): the controls u_k (the torques of the velocity coordinates
        `controls`, default every one after a floating base's six) over `horizon` steps minimising
        Σ ½ δxᵀ diag(Q) δx + ½ (u − u_ref)ᵀ diag(R) (u − u_ref) + ½ δx_Nᵀ diag(Qf) δx_N, δx =
        (difference(q_ref, q), v − v_ref); lo <= u <= hi. Q, Qf: 2nv weights; R: one per control;
        q_ref default the current q, v_ref and u_ref zero; warm_start: (horizon, nu) controls.
        The other torques are held at `tau`. Returns a dict: u (horizon, nu), K (horizon, nu, 2nv:
        u = u_k + K_k δx from the plan's state), q (horizon + 1, nq), v (horizon + 1, nv), cost,
        cost_start, iterations, converged. The simulator's state is left as it was."""
        self._take_written_state()
        nv, n2 = self.nv, 2 * self.nv
        ctl = np.ascontiguousarray(list(range(6, nv)) if controls is None else list(controls), dtype=np.intc)
        nu = len(ctl)
        err = _ErrorRecord()
        p = _ilqr_new(_sim_stepper(self._sim), int(horizon), _scenario_stepper_dt(self._sc),
                      ctl.ctypes.data_as(C.POINTER(C.c_int)), nu, C.byref(err))
        if not p:
            _raise(err, "optimize")
        try:
            qr = self.q.copy() if q_ref is None else _vec(q_ref, self.nq, "q_ref")
            vr = np.zeros(nv) if v_ref is None else _vec(v_ref, nv, "v_ref")
            ur = np.zeros(nu) if u_ref is None else _vec(u_ref, nu, "u_ref")
            Qv, Rv, Qfv = _vec(Q, n2, "Q"), _vec(R, nu, "R"), _vec(Qf, n2, "Qf")
            if _ilqr_set_cost(p, _ptr(Qv), _ptr(Rv), _ptr(Qfv), _ptr(qr), _ptr(vr), _ptr(ur)) != 0:
                _raise(_ilqr_last_error(p).contents, "optimize: the cost")
            if lo is not None or hi is not None:
                lov = np.full(nu, -np.inf) if lo is None else _vec(lo, nu, "lo")
                hiv = np.full(nu, np.inf) if hi is None else _vec(hi, nu, "hi")
                if _ilqr_set_limits(p, _ptr(lov), _ptr(hiv)) != 0:
                    _raise(_ilqr_last_error(p).contents, "optimize: the limits")
            U = np.ctypeslib.as_array(_ilqr_controls(p), shape=(int(horizon), nu))
            if warm_start is not None:
                U[:] = np.asarray(warm_start, dtype=np.float64).reshape(int(horizon), nu)
            stats = _IlqrStats()
            if _ilqr_solve(p, int(iterations), float(tol), C.byref(stats)) != 0:
                _raise(_ilqr_last_error(p).contents, "optimize")
            K = np.ctypeslib.as_array(_ilqr_gains(p), shape=(int(horizon), n2, nu)).transpose(0, 2, 1).copy()
            qs, vs = np.empty((int(horizon) + 1, self.nq)), np.empty((int(horizon) + 1, nv))
            for k in range(int(horizon) + 1):
                _ilqr_state(p, k, _ptr(qs[k]), _ptr(vs[k]))
            return {"u": U.copy(), "K": K, "q": qs, "v": vs, "cost": stats.cost, "cost_start": stats.cost_start,
                    "iterations": stats.iterations, "converged": bool(stats.converged)}
        finally:
            _ilqr_free(p)

    def set_state(self, q=None, v=None, hold_contacts=False):
        """Writes q and v (None: as they are). hold_contacts=False: a new start, as writing the `q` and
        `v` views (the contacts touching at the new state are placed afresh); True: the contacts'
        anchors and modes are kept as they are, as step_derivatives holds them, so that the steps
        from states perturbed this way (after restore_state) are the map it differentiates."""
        q = self.q.copy() if q is None else _vec(q, self.nq, "q")
        v = self.v.copy() if v is None else _vec(v, self.nv, "v")
        self._take_written_state()
        if hold_contacts:
            self.q[:], self.v[:] = q, v
            self._last = (self.q.copy(), self.v.copy())
        else:
            _system_set_state(self._sys, _ptr(q), _ptr(v), self.t)
            self._last = (self.q.copy(), self.v.copy())

    def integrate(self, q, dq):
        """The configuration q moved by the tangent vector dq (nv), on the model's Lie group."""
        return _integrate_with(_scenario_model(self._sc), self.nq, self.nv, q, dq)

    def difference(self, q0, q1):
        """The tangent vector dq with integrate(q0, dq) = q1."""
        return _difference_with(_scenario_model(self._sc), self.nq, self.nv, q0, q1)

    def save_state(self):
        """The system's and the stepper's whole state (t, q, v, tau, the contacts' anchors and modes,
        the scheme's warm starts) as bytes: restore_state(b) continues bitwise from here. The
        scenario's own controller (use_controller=True) keeps its memory apart."""
        st = _sim_stepper(self._sim)
        buf = C.create_string_buffer(_stepper_state_size(st))
        err = _ErrorRecord()
        if _stepper_save(st, buf, len(buf), C.byref(err)) != 0:
            _raise(err, "cannot save the state")
        return buf.raw

    def restore_state(self, state):
        """Puts back a state from save_state (of this simulator, or one of the same scenario)."""
        buf = C.create_string_buffer(bytes(state), len(state))
        err = _ErrorRecord()
        if _stepper_restore(_sim_stepper(self._sim), buf, len(state), C.byref(err)) != 0:
            _raise(err, "cannot restore the state")
        self._last = (self.q.copy(), self.v.copy())

    def contact_forces(self):
        """(ncontacts, 3) world forces the environment applies at the contact points (N), and the
        (ncontacts,) active flags."""
        n = _system_ncontacts(self._sys)
        f, active, info = np.zeros((n, 3)), np.zeros(n, dtype=bool), _ContactInfo()
        for i in range(n):
            _system_contact(self._sys, i, C.byref(info))
            f[i] = info.force[:]
            active[i] = bool(info.active)
        return f, active


try:
    from ._batch import Batch  # noqa: E402  (the batch API, when the library has it)
except ImportError:   # pragma: no cover
    Batch = None
from . import envs  # noqa: E402,F401  (mbs.envs.make: vector environments over Batch)
