"""mbs.Batch: N systems of one scenario stepped together on T threads (the library's batch,
include/mbs/batch.h), for vectorised environments: torques in as an (N, nv) array, states and
contact forces out as (N, nq), (N, nv) and (N, C, 3) arrays. Results do not depend on T."""
import ctypes as C

import numpy as np

from . import (_ErrorRecord, _dp, _fn, _lib, _load_scenario, _nq, _nv, _ptr, _raise, _scenario_free,
               _scenario_model, _vp)


class _Option(C.Structure):
    # mbs_option of mbs/options.h: a number, or a word (an ENUM's, an INT's named value, a TEXT's)
    _fields_ = [("key", C.c_char_p), ("value", C.c_double), ("word", C.c_char_p)]


_SETUP = C.CFUNCTYPE(C.c_int, _vp, C.c_int, _vp, C.POINTER(_ErrorRecord))


class _Config(C.Structure):
    _fields_ = [("stepper", C.c_char_p), ("options", C.POINTER(_Option)), ("noptions", C.c_int),
                ("max_contacts", C.c_int), ("nthreads", C.c_int), ("setup", _SETUP), ("user", _vp),
                ("models", C.POINTER(_vp))]


class _Material(C.Structure):
    # mbs_material of mbs/contact.h
    _fields_ = [("k_normal", C.c_double), ("k_tangent", C.c_double), ("b_normal", C.c_double),
                ("b_tangent", C.c_double), ("mu", C.c_double)]


_setup_system = _fn("mbs_scenario_setup_system", C.c_int, _vp, _vp, C.POINTER(_ErrorRecord))
_scenario_stepper = _fn("mbs_scenario_stepper", C.c_char_p, _vp)
_scenario_options = _fn("mbs_scenario_options", C.c_int, _vp, C.c_char_p, C.POINTER(_Option), C.c_int)
_scenario_step = _fn("mbs_scenario_dt", C.c_double, _vp)
_batch_new = _fn("mbs_batch_new", _vp, _vp, C.c_int, C.POINTER(_Config), C.POINTER(_ErrorRecord))
_batch_free = _fn("mbs_batch_free", None, _vp)
_batch_ncontacts = _fn("mbs_batch_ncontacts", C.c_int, _vp)
_batch_nthreads = _fn("mbs_batch_nthreads", C.c_int, _vp)
_batch_set_tau = _fn("mbs_batch_set_tau", None, _vp, _dp)
_batch_set_state = _fn("mbs_batch_set_state", C.c_int, _vp, C.c_int, _dp, _dp, C.c_double)
_batch_step = _fn("mbs_batch_step", C.c_int, _vp, C.c_double, C.POINTER(_ErrorRecord))
_batch_q = _fn("mbs_batch_q", None, _vp, _dp)
_batch_v = _fn("mbs_batch_v", None, _vp, _dp)
_batch_time = _fn("mbs_batch_time", None, _vp, _dp)
_batch_forces = _fn("mbs_batch_contact_forces", None, _vp, _dp)
_batch_status = _fn("mbs_batch_status", C.c_int, _vp, C.c_int)
_batch_step_n = _fn("mbs_batch_step_n", C.c_int, _vp, C.c_double, C.c_int, C.POINTER(_ErrorRecord))
_batch_set_impedance = _fn("mbs_batch_set_impedance", None, _vp, _dp, _dp, _dp)
_batch_set_material = _fn("mbs_batch_set_material", C.c_int, _vp, C.c_int, C.c_int, C.POINTER(_Material),
                          C.POINTER(_ErrorRecord))
_batch_system = _fn("mbs_batch_system", _vp, _vp, C.c_int)
_system_add_contact = _fn("mbs_system_add_contact", C.c_int, _vp, C.c_char_p, _dp, C.c_double,
                          C.POINTER(_ErrorRecord))
_system_environment = _fn("mbs_system_environment", _vp, _vp)


class Batch:
    """n copies of a scenario's system (its model, contact points, environment, initial state and
    stepper with its options), stepped together on `nthreads` threads by `step()` of the scenario's
    dt. The scenario's controller is not used: set the torques with set_tau((n, nv) array)."""

    def __init__(self, ini_path, n, overrides=None, nthreads=1, models=None, contacts=(), max_contacts=32):
        """max_contacts: room for contact points in each system (the scenario's and `contacts`; each
        system's stepper sizes its buffers for that many: give the number you use when n is large);
        models: None, or n mbs.Model (kept alive by the batch) of the scenario's robot, system i of
        models[i] (e.g. each with its own base mass); contacts: extra contact points added to every
        system (before the scenario's), as (frame, (x, y, z) offset in it, radius) triples."""
        self._sc = _load_scenario(ini_path, overrides)
        m = _scenario_model(self._sc)
        self.n, self.nq, self.nv = int(n), _nq(m), _nv(m)
        self.dt = _scenario_step(self._sc)
        sc = self._sc
        extra = [(f.encode(), np.ascontiguousarray(o, dtype=np.float64), float(r)) for f, o, r in contacts]

        def setup(sys, index, user, err):
            for f, o, r in extra:   # before the scenario's setup, which freezes the scene
                if _system_add_contact(sys, f, _ptr(o), r, err) < 0:
                    return err.contents.code or 1
            return _setup_system(sc, sys, err)

        self._setup = _SETUP(setup)   # kept alive as long as the batch
        name = _scenario_stepper(self._sc)
        opts = (_Option * 64)()
        nopt = _scenario_options(self._sc, name, opts, 64)
        cfg = _Config(name, opts, nopt, int(max_contacts), int(nthreads), self._setup, None)
        self._models = None
        if models is not None:
            if len(models) != self.n:
                _scenario_free(self._sc)
                self._sc = None
                raise ValueError("models: %d for %d systems" % (len(models), self.n))
            self._models = list(models)   # alive as long as the batch
            self._model_ptrs = (_vp * self.n)(*[mi._m for mi in self._models])
            cfg.models = self._model_ptrs
        err = _ErrorRecord()
        self._b = _batch_new(m, self.n, C.byref(cfg), C.byref(err))
        if not self._b:
            _scenario_free(self._sc)
            self._sc = None
            _raise(err, "cannot make the batch")
        self.nthreads = _batch_nthreads(self._b)
        self.ncontacts = _batch_ncontacts(self._b)

    def __del__(self):
        if getattr(self, "_b", None):
            _batch_free(self._b)
            self._b = None
        if getattr(self, "_sc", None):
            _scenario_free(self._sc)
            self._sc = None

    def set_tau(self, tau):
        """The torques every system holds during the next steps: an (n, nv) array (row i: system i)."""
        tau = np.ascontiguousarray(tau, dtype=np.float64)
        if tau.shape != (self.n, self.nv):
            raise ValueError("tau: expected shape (%d, %d), got %s" % (self.n, self.nv, tau.shape))
        _batch_set_tau(self._b, _ptr(tau))

    def set_state(self, i, q, v=None, t=0.0):
        """A new start for system i (after a failure too)."""
        q = np.ascontiguousarray(q, dtype=np.float64)
        v = np.zeros(self.nv) if v is None else np.ascontiguousarray(v, dtype=np.float64)
        if q.shape != (self.nq,) or v.shape != (self.nv,):
            raise ValueError("set_state: q of %d and v of %d entries expected" % (self.nq, self.nv))
        if _batch_set_state(self._b, int(i), _ptr(q), _ptr(v), float(t)) != 0:
            raise IndexError("set_state: no system %s" % i)

    def step(self, dt=None):
        """Steps every system by dt (default: the scenario's). Raises mbs.Error naming the first system
        that failed; the others are stepped all the same (status() tells which failed)."""
        err = _ErrorRecord()
        if _batch_step(self._b, float(self.dt if dt is None else dt), C.byref(err)) != 0:
            _raise(err, "a system failed")

    def step_n(self, nsteps, dt=None):
        """nsteps steps of dt (default: the scenario's) in one call into the library (a control period:
        torque and impedance held); raises as step()."""
        err = _ErrorRecord()
        if _batch_step_n(self._b, float(self.dt if dt is None else dt), int(nsteps), C.byref(err)) != 0:
            _raise(err, "a system failed")

    def set_impedance(self, kp, kd, q_ref):
        """The joint impedance every system holds from its next step, as a PD acting at every step:
        τ = kp (q_ref − q) − kd v on the one-coordinate joints; kp, kd (n, nv), q_ref (n, nq) arrays,
        C-contiguous float64 (used as they are, without a copy); kp None removes it."""
        if kp is None:
            _batch_set_impedance(self._b, None, None, None)
            return
        for a, w, name in ((kp, self.nv, "kp"), (kd, self.nv, "kd"), (q_ref, self.nq, "q_ref")):
            if a.shape != (self.n, w) or a.dtype != np.float64 or not a.flags.c_contiguous:
                raise ValueError("%s: expected a C-contiguous float64 array of shape (%d, %d)" % (name, self.n, w))
        _batch_set_impedance(self._b, _ptr(kp), _ptr(kd), _ptr(q_ref))

    def set_material(self, i, solid, k_normal, k_tangent, b_normal, b_tangent, mu):
        """Solid `solid` (planes first: 0 is the scenario's ground) of system i gets this material."""
        mat = _Material(k_normal, k_tangent, b_normal, b_tangent, mu)
        err = _ErrorRecord()
        if _batch_set_material(self._b, int(i), int(solid), C.byref(mat), C.byref(err)) != 0:
            _raise(err, "set_material")

    def read_state(self, q_out, v_out):
        """The configurations and velocities into q_out (n, nq) and v_out (n, nv), C-contiguous float64
        arrays of the caller's (no new array)."""
        _batch_q(self._b, _ptr(q_out))
        _batch_v(self._b, _ptr(v_out))

    @property
    def q(self):
        out = np.empty((self.n, self.nq))
        _batch_q(self._b, _ptr(out))
        return out

    @property
    def v(self):
        out = np.empty((self.n, self.nv))
        _batch_v(self._b, _ptr(out))
        return out

    @property
    def t(self):
        out = np.empty(self.n)
        _batch_time(self._b, _ptr(out))
        return out

    def contact_forces(self):
        """(n, C, 3): the world force on each contact point of each system (zero when free)."""
        out = np.empty((self.n, self.ncontacts, 3))
        _batch_forces(self._b, _ptr(out))
        return out

    def status(self):
        """(n,) codes: 0 for a system stepping, else the error code of the step that failed."""
        return np.array([_batch_status(self._b, i) for i in range(self.n)])

