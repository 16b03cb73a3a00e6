"""mbs.envs: vectorised Solo-12 environments for learning, over mbs.Batch (numpy only).

    import mbs.envs
    env = mbs.envs.make("solo-walk", num_envs=1024, seed=0, nthreads=2)
    obs, info = env.reset(seed=0)                       # (1024, 49) float32
    obs, reward, terminated, truncated, info = env.step(actions)   # actions (1024, 12) in [-1, 1]

Conventions: Gymnasium's VectorEnv (1.x): num_envs, single_observation_space, single_action_space,
observation_space, action_space (gymnasium.spaces.Box when Gymnasium is importable, else mbs.envs.Box
with shape, low, high, dtype), reset(seed=...) -> (obs, info), step(actions) -> (obs, reward,
terminated, truncated, info), close(). Autoreset is next-step (metadata["autoreset_mode"] =
"NextStep", Gymnasium 1.x's default): the step that ends an episode returns its last observation
with terminated or truncated set; the next step() resets that environment, ignores its action and
returns its first observation with reward 0 and both flags False.

One step is one control period (10 ms): the actions become joint targets, q_ref = q_stand + 0.3 action
(solo-walk) or q_ref = q + 0.15 action about the joint angles q measured at the period's start
(solo-stand: from lying, the joints are far from any fixed posture, and a target that jumps there
would whip the legs at tens of rad/s; 0.15 rad per period keeps the PD's torque near Solo's
actuators' ~2.7 N m), held by a PD that the library applies at every physics step of the period
(the systems' joint impedance, mbs_batch_set_impedance: τ = s kp (q_ref − q) − s kd q̇, s the motor
strength), and every environment is stepped by one call into the library (mbs_batch_step_n: expo at
2 ms, 5 steps, on nthreads threads, without the interpreter's lock held by numpy work). The robot and
its contacts are scenarios/solo_trot.ini's (feet spheres of 0.0191 m, K = 1e5 N/m, B = 300 N s/m,
μ = 1 nominal); solo-stand adds spheres on the base's corners and the knees, so that it can lie.

Observation (49 float32; the same array every step, overwritten in place: copy what you keep):
  [0:3]   base linear velocity, base frame (m/s)        [3:6]  base angular velocity, base frame (rad/s)
  [6:9]   gravity's direction in the base frame (unit)  [9]    base height above the ground (m)
  [10:13] command: forward, lateral velocity (m/s), yaw rate (rad/s); zeros for solo-stand
  [13:25] joint angles − the standing posture (rad)     [25:37] joint velocities (rad/s)
  [37:49] the previous action
Joints in the model's order: FL, FR, HL, HR legs, each HAA, HFE, KFE.

Rewards and terminations are computed in numpy, from the state the library wrote into the env's
arrays: a handful of vector operations over (num_envs, 49) arrays cost microseconds beside the
physics (milliseconds per period for 1024 environments), and a reward in Python is one a user reads,
changes and weights without rebuilding the library. Each term is weighted and multiplied by the
control period (0.01 s), so an episode's return is in seconds of reward:
  solo-walk:  1.0 exp(−|v_xy − c_xy|² / 0.25) + 0.5 exp(−(ω_z − c_ω)² / 0.25) − 2 v_z² − 0.05 |ω_xy|²
              − 1.0 |g_xy|² − 2e-4 Σ|τ q̇| − 0.01 |a − a_prev|² + 0.25 (alive)
              terminated when the base is below 0.12 m or tilted past 60°; truncated at 1000 steps (10 s);
              command per episode: c_x ∈ [0, 0.5] m/s, c_y ∈ [−0.2, 0.2] m/s, c_ω ∈ [−0.5, 0.5] rad/s
              (ranges "command_x", "command_y", "command_yaw").
  solo-stand: 1.0 exp(−(z − 0.235)² / 0.003) + 0.5 (1 − g_z) / 2 + 0.5 exp(−|q − q_stand|² / 2)
              − 2e-4 Σ|τ q̇| − 0.01 |a − a_prev|²; starts lying on its belly or a side, legs folded
              (HAA in ±0.5, thighs near horizontal, HFE 1.2–1.9 rad, knees bent 2.2–2.9 rad), never terminated; truncated at 500
              steps (5 s).
A system whose step fails (a non-finite state) terminates its episode with reward −1.

Domain randomisation (randomize=True; Ranges below are the defaults, reproducible from the seed):
  friction μ ∈ [0.5, 1.25], ground stiffness K ∈ [5e4, 2e5] N/m (log-uniform), damping B = β K with
  β ∈ [2e-3, 4e-3] s (damping proportional to stiffness, which expo integrates in closed form), motor
  strength s ∈ [0.85, 1.15] (scales kp and kd), sampled per environment at every reset; pushes: an
  environment not being pushed starts one with probability dt / 3 s per step, a horizontal force of
  up to 8 N in any direction at the base's origin for 0.05–0.2 s (solo-walk), as a generalised force
  on the base's coordinates rotated into the base frame at the period's start and held over it;
  added base mass m ∈ [−0.1, 0.3] kg: a payload at the base's centre of mass. The model is immutable
  and shared by the steppers, so a mass change is a model of its own: each environment gets one, its
  base link's mass changed in the URDF (so M(q), the bias and gravity all see it, unlike a force
  equal to the extra weight, which leaves the inertia as it was); it is sampled once per
  environment, from the constructor's seed, when the env is made, not at each reset.
"""
import os
import re

import numpy as np

from . import Error, Model, _joint_idx_v, _fn, _vp
from ._batch import Batch

__all__ = ["make", "SoloEnv", "Box", "TASKS"]

try:   # Gymnasium's own spaces and base class when it is there; numpy only otherwise
    import gymnasium as _gym
    from gymnasium.spaces import Box
    _VectorEnvBase = _gym.vector.VectorEnv
except ImportError:   # pragma: no cover (Gymnasium is optional)
    _gym = None

    class Box:
        """A box of shape `shape` with bounds low, high (arrays of that shape) and a dtype, as Gymnasium's."""

        def __init__(self, low, high, shape=None, dtype=np.float32):
            self.dtype = np.dtype(dtype)
            shape = tuple(shape) if shape is not None else np.shape(low)
            self.shape = shape
            self.low = np.broadcast_to(np.asarray(low, dtype=self.dtype), shape).copy()
            self.high = np.broadcast_to(np.asarray(high, dtype=self.dtype), shape).copy()

        def contains(self, x):
            x = np.asarray(x)
            return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

        def sample(self, rng=None):
            rng = rng or np.random.default_rng()
            lo, hi = np.maximum(self.low, -1e6), np.minimum(self.high, 1e6)
            return rng.uniform(lo, hi).astype(self.dtype)

        def __repr__(self):
            return "Box(%s, %s)" % (self.shape, self.dtype)

    class _VectorEnvBase:
        pass

_joint_idx_q = _fn("mbs_joint_idx_q", __import__("ctypes").c_int, _vp, __import__("ctypes").c_int)


def data_dir():
    """Where the robot and scenario files are: $MBS_DATA, the source tree, or make install's share/mbs."""
    if os.environ.get("MBS_DATA"):
        return os.environ["MBS_DATA"]
    tree = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    if os.path.exists(os.path.join(tree, "scenarios", "solo_trot.ini")):
        return os.path.normpath(tree)
    try:
        from ._installed import DATA
        return DATA
    except ImportError:
        raise Error("mbs.envs: no scenarios/solo_trot.ini: set MBS_DATA to a folder with scenarios/ and urdf/ "
                    "(make install puts them in PREFIX/share/mbs)")


# the defaults of the randomisation (see the module's docstring)
RANDOMIZATION = {
    "friction": (0.5, 1.25),
    "stiffness": (5e4, 2e5),         # N/m, log-uniform
    "damping_ratio": (2e-3, 4e-3),   # s: B = β K
    "motor_strength": (0.85, 1.15),
    "added_mass": (-0.1, 0.3),       # kg on the base, per environment for its life
    "push_force": (0.0, 8.0),        # N, horizontal
    "push_duration": (0.05, 0.2),    # s
    "push_interval": 3.0,            # s: mean time between pushes
    "command_x": (0.0, 0.5),         # m/s, solo-walk's commanded forward velocity per episode
    "command_y": (-0.2, 0.2),        # m/s, lateral
    "command_yaw": (-0.5, 0.5),      # rad/s
}
NOMINAL = {"friction": 1.0, "stiffness": 1e5, "damping_ratio": 3e-3, "motor_strength": 1.0}

# solo-stand's extra contact spheres: the base's eight corners and the four knees (frame, offset, radius)
_BASE_CORNERS = [("base_link", (sx * 0.19, sy * 0.06, sz * 0.03), 0.015)
                 for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
_KNEES = [(leg + "_LOWER_LEG", (0.0, 0.0, 0.0), 0.016) for leg in ("FL", "FR", "HL", "HR")]
_FEET = [(leg + "_FOOT", (0.0, 0.0, 0.0), 0.0191) for leg in ("FL", "FR", "HL", "HR")]

TASKS = {
    "solo-walk": dict(contacts=(), max_steps=1000, action_scale=0.3, relative=False, pushes=True, lying=False,
                      walk=True),
    "solo-stand": dict(contacts=tuple(_BASE_CORNERS + _KNEES), max_steps=500, action_scale=0.15, relative=True,
                       pushes=False, lying=True, walk=False),
}


def make(name, num_envs=16, seed=0, nthreads=1, **kwargs):
    """A vector environment of task `name` ("solo-walk", "solo-stand"): num_envs environments stepped on
    nthreads threads, randomised from seed (randomize=False: the nominal robot and ground; ranges: a
    dict overriding RANDOMIZATION's; max_steps: the episode's length in steps, else the task's)."""
    if name not in TASKS:
        raise ValueError("mbs.envs.make: no task %r (tasks: %s)" % (name, ", ".join(sorted(TASKS))))
    return SoloEnv(name, num_envs=num_envs, seed=seed, nthreads=nthreads, **kwargs)


def _quat_rows(quat):
    """The rows of R (base -> world) from quaternions (n, 4) x y z w: (R0, R1, R2), each (n, 3)."""
    x, y, z, w = quat[:, 0], quat[:, 1], quat[:, 2], quat[:, 3]
    r0 = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1)
    r1 = np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1)
    r2 = np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)
    return r0, r1, r2


class SoloEnv(_VectorEnvBase):
    """Solo-12 tasks as a vector environment over mbs.Batch (see the module's docstring)."""

    metadata = {"autoreset_mode": "NextStep", "render_modes": []}
    OBS = 49
    PERIOD_STEPS = 5      # physics steps of 2 ms per control period
    KP, KD = 6.0, 0.2     # the PD's gains (N m/rad, N m s/rad) at motor strength 1

    def __init__(self, task, num_envs=16, seed=0, nthreads=1, randomize=True, ranges=None, max_steps=None):
        cfg = dict(TASKS[task])
        if max_steps is not None:
            cfg["max_steps"] = int(max_steps)
        self.task, self._cfg = task, cfg
        self.num_envs = n = int(num_envs)
        self.randomize = bool(randomize)
        self.ranges = dict(RANDOMIZATION, **(ranges or {}))
        self._seed = seed
        root = data_dir()
        ini = os.path.join(root, "scenarios", "solo_trot.ini")
        overrides = {"stepper.name": "expo", "stepper.dt": 0.002, "controller.type": "none"}
        models = None
        self.added_mass = np.zeros(n)
        if self.randomize:
            lo, hi = self.ranges["added_mass"]
            self.added_mass = np.random.default_rng([int(seed), 7]).uniform(lo, hi, n)
            models = self._mass_models(os.path.join(root, "urdf", "solo12.urdf"), self.added_mass)
        self._batch = Batch(ini, n, overrides, nthreads=nthreads, models=models, contacts=cfg["contacts"],
                            max_contacts=len(_FEET) + len(cfg["contacts"]))
        b = self._batch
        self.nthreads = b.nthreads
        self.dt = b.dt * self.PERIOD_STEPS
        self.nq, self.nv = b.nq, b.nv
        self._q, self._v = np.empty((n, b.nq)), np.empty((n, b.nv))
        b.read_state(self._q, self._v)
        self.q_stand = self._q[0].copy()
        m = self._kin_model = Model(os.path.join(root, "urdf", "solo12.urdf"))
        joints = [j for j in range(len(m.joint_names)) if m.joint_types[j] in ("revolute", "prismatic")]
        self.joint_names = [m.joint_names[j] for j in joints]
        self._iq = np.array([_joint_idx_q(m._m, j) for j in joints])
        self._iv = np.array([_joint_idx_v(m._m, j) for j in joints])
        nj = len(joints)
        self.contacts = list(_FEET) + list(cfg["contacts"])
        # the PD's arrays, handed to the library as they are (C-contiguous float64)
        self._kp, self._kd = np.zeros((n, b.nv)), np.zeros((n, b.nv))
        self._qref = np.tile(self.q_stand, (n, 1))
        self._tau = np.zeros((n, b.nv))
        # per-environment episode state
        self._strength = np.ones(n)
        self._command = np.zeros((n, 3))
        self._steps = np.zeros(n, dtype=np.int64)
        self._action = np.zeros((n, nj))
        self._prev_action = np.zeros((n, nj))
        self._push_force = np.zeros((n, 2))
        self._push_left = np.zeros(n)
        self._needs_reset = np.zeros(n, dtype=bool)
        self._reset_q = np.tile(self.q_stand, (n, 1))   # each environment's last start
        self._obs = np.zeros((n, self.OBS), dtype=np.float32)
        self._rng = np.random.default_rng(seed)
        hi = np.full(self.OBS, np.inf, dtype=np.float32)
        self.single_observation_space = Box(-hi, hi, shape=(self.OBS,), dtype=np.float32)
        self.single_action_space = Box(-1.0, 1.0, shape=(nj,), dtype=np.float32)
        self.observation_space = Box(np.broadcast_to(-hi, (n, self.OBS)), np.broadcast_to(hi, (n, self.OBS)),
                                     shape=(n, self.OBS), dtype=np.float32)
        self.action_space = Box(-1.0, 1.0, shape=(n, nj), dtype=np.float32)
        self.material = np.zeros((n, 3))   # friction, stiffness, damping of each environment's ground

    @staticmethod
    def _mass_models(urdf, added):
        """One model per environment: the URDF with its base link's mass raised by added[i] (a payload
        at the base's centre of mass: the link's inertia about it unchanged)."""
        text = open(urdf, encoding="utf-8").read()
        link = re.search(r'<link name="base_link">.*?<mass value="([^"]+)"/>', text, re.S)
        base = float(link.group(1))
        start, end = link.span(1)
        return [Model(urdf, text=text[:start] + repr(base + float(a)) + text[end:]) for a in added]

    # ---- resets ----

    def _sample_resets(self, mask):
        """Randomisation and start of the environments in mask: one draw of each quantity for every
        environment (used where mask is set), so that the draws do not depend on which ones reset."""
        n, rng, r = self.num_envs, self._rng, self.ranges
        u = rng.random((n, 4))
        if self.randomize:
            mu = r["friction"][0] + u[:, 0] * (r["friction"][1] - r["friction"][0])
            lk = np.log(r["stiffness"][0]) + u[:, 1] * (np.log(r["stiffness"][1]) - np.log(r["stiffness"][0]))
            K = np.exp(lk)
            beta = r["damping_ratio"][0] + u[:, 2] * (r["damping_ratio"][1] - r["damping_ratio"][0])
            s = r["motor_strength"][0] + u[:, 3] * (r["motor_strength"][1] - r["motor_strength"][0])
        else:
            mu, K = np.full(n, NOMINAL["friction"]), np.full(n, NOMINAL["stiffness"])
            beta, s = np.full(n, NOMINAL["damping_ratio"]), np.full(n, NOMINAL["motor_strength"])
        lo = [r["command_x"][0], r["command_y"][0], r["command_yaw"][0]]
        hi = [r["command_x"][1], r["command_y"][1], r["command_yaw"][1]]
        cmd = rng.uniform(lo, hi, (n, 3)) if self._cfg["walk"] else np.zeros((n, 3))
        nj = len(self._iq)
        joints = rng.uniform(-1, 1, (n, nj))
        pose = rng.random((n, 3))
        b = self._batch
        for i in np.flatnonzero(mask):
            b.set_material(i, 0, K[i], K[i], beta[i] * K[i], beta[i] * K[i], mu[i])
            self.material[i] = (mu[i], K[i], beta[i] * K[i])
            q = self._reset_q[i] = self._start(joints[i], pose[i])
            b.set_state(i, q, None, 0.0)
        self._strength[mask] = s[mask]
        self._command[mask] = cmd[mask]
        self._steps[mask] = 0
        self._action[mask] = 0
        self._prev_action[mask] = 0
        self._push_left[mask] = 0
        self._push_force[mask] = 0
        self._kp[:, self._iv] = self.KP * self._strength[:, None]
        self._kd[:, self._iv] = self.KD * self._strength[:, None]
        self._qref[mask] = self._reset_q[mask] if self._cfg["relative"] else self.q_stand

    def _start(self, joints, pose):
        """A start: standing, the joints within 0.03 rad of the posture (solo-walk); or lying on the
        belly or a side (yaw anywhere, roll within 0.1 rad of 0 or ±π/2), the legs folded, dropped
        from 2 mm above the ground (solo-stand)."""
        q = self.q_stand.copy()
        if not self._cfg["lying"]:
            q[self._iq] += 0.03 * joints
            q[2] += 0.003
            return q
        # legs folded flat: HAA in [−0.5, 0.5], the thigh near horizontal (HFE 1.2–1.9 rad the standing
        # posture's way), the knee bent 2.2–2.9 rad its own way
        nl = len(self._iq) // 3
        fold = np.sign(self.q_stand[self._iq][2::3])
        q[self._iq[0::3]] = 0.5 * joints[0::3]
        q[self._iq[1::3]] = np.sign(self.q_stand[self._iq][1::3]) * (1.55 + 0.35 * joints[1::3])
        q[self._iq[2::3]] = fold * (2.55 + 0.35 * joints[2::3][:nl])
        roll = (0.0, np.pi / 2, -np.pi / 2)[int(pose[0] * 3) % 3] + 0.2 * (pose[1] - 0.5)
        yaw = 2 * np.pi * pose[2]
        # q_yaw ⊗ q_roll, x y z w
        cr, sr, cy, sy = np.cos(roll / 2), np.sin(roll / 2), np.cos(yaw / 2), np.sin(yaw / 2)
        q[3:7] = (cy * sr, sy * sr, sy * cr, cy * cr)
        q[0:3] = 0.0
        lowest = np.inf
        for f, o, r in self.contacts:
            R, p = self._kin_model.frame_placement(f, q)
            lowest = min(lowest, p[2] + R[2] @ np.asarray(o) - r)
        q[2] = 0.002 - lowest
        return q

    def reset(self, seed=None, options=None):
        """Resets every environment (seed: a new random stream, as Gymnasium's); returns (obs, info)."""
        if seed is not None:
            self._seed = seed
            self._rng = np.random.default_rng(seed)
        self._sample_resets(np.ones(self.num_envs, dtype=bool))
        self._needs_reset[:] = False
        self._batch.read_state(self._q, self._v)
        self._observe()
        return self._obs, {}

    # ---- steps ----

    def _pushes(self):
        """Starts, continues and ends the pushes; their generalised force on the base into self._tau."""
        n, r, rng = self.num_envs, self.ranges, self._rng
        u = rng.random((n, 4))
        self._push_left -= self.dt
        if self._cfg["pushes"] and self.randomize:
            start = (self._push_left <= 0) & (u[:, 0] < self.dt / r["push_interval"])
            mag = r["push_force"][0] + u[:, 1] * (r["push_force"][1] - r["push_force"][0])
            ang = 2 * np.pi * u[:, 2]
            dur = r["push_duration"][0] + u[:, 3] * (r["push_duration"][1] - r["push_duration"][0])
            self._push_force[start] = np.stack([mag * np.cos(ang), mag * np.sin(ang)], axis=1)[start]
            self._push_left[start] = dur[start]
        self._push_force[self._push_left <= 0] = 0
        # a world force f at the base's origin is the generalised force Rᵀ f on its linear coordinates
        r0, r1, _ = _quat_rows(self._q[:, 3:7])
        self._tau[:, 0:3] = self._push_force[:, 0:1] * r0 + self._push_force[:, 1:2] * r1

    def step(self, actions):
        """One control period of every environment; returns (obs, reward, terminated, truncated, info)."""
        a = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)
        b = self._batch
        resetting = self._needs_reset.copy()
        self._prev_action[:] = self._action
        np.clip(a, -1.0, 1.0, out=self._action)
        base = self._q[:, self._iq] if self._cfg["relative"] else self.q_stand[self._iq]
        self._qref[:, self._iq] = base + self._cfg["action_scale"] * self._action
        if resetting.any():
            self._sample_resets(resetting)
        self._pushes()
        b.set_tau(self._tau)
        b.set_impedance(self._kp, self._kd, self._qref)
        failed = np.zeros(self.num_envs, dtype=bool)
        try:
            b.step_n(self.PERIOD_STEPS)
        except Error:
            failed = b.status() != 0
        self._steps += 1
        if resetting.any():   # next-step autoreset: these return their first observation, unstepped
            for i in np.flatnonzero(resetting):
                b.set_state(i, self._reset_q[i], None, 0.0)
        b.read_state(self._q, self._v)
        reward = self._reward()
        terminated = self._terminated() | failed
        reward[failed] = -1.0
        if failed.any():   # a failed system's state is not finite: its observation is its last good one
            self._q[failed] = self.q_stand
            self._v[failed] = 0
        truncated = self._steps >= self._cfg["max_steps"]
        self._observe()
        reward[resetting] = 0.0
        terminated[resetting] = False
        truncated[resetting] = False
        self._steps[resetting] = 0
        self._action[resetting] = 0
        self._needs_reset = terminated | truncated
        return self._obs, reward.astype(np.float32), terminated, truncated, {}

    # ---- what the policy sees and gets ----

    def _observe(self):
        self.observation(self._q, self._v, self._command, self._action, self._obs)

    def observation(self, q, v, command, action, out=None):
        """The observation (n, 49) of states q (n, nq), v (n, nv) under commands (n, 3) after actions
        (n, 12), into out when given: what step() returns, for a program that runs a policy on a
        system of its own (a playback, mbs.simulate's control)."""
        q, v = np.atleast_2d(q), np.atleast_2d(v)
        o = out if out is not None else np.zeros((q.shape[0], self.OBS), dtype=np.float32)
        _, _, r2 = _quat_rows(q[:, 3:7])
        o[:, 0:6] = v[:, 0:6]              # Pinocchio's free flyer: v in the base frame
        o[:, 6:9] = -r2                    # Rᵀ (0, 0, −1)
        o[:, 9] = q[:, 2]
        o[:, 10:13] = command
        nj = len(self._iq)
        o[:, 13:13 + nj] = q[:, self._iq] - self.q_stand[self._iq]
        o[:, 13 + nj:13 + 2 * nj] = v[:, self._iv]
        o[:, 13 + 2 * nj:13 + 3 * nj] = action
        np.nan_to_num(o, copy=False, posinf=1e6, neginf=-1e6)
        return o

    # read-only views of the environments' state after the last step, for a program's own rewards
    q = property(lambda self: self._q, doc="(num_envs, nq) configurations after the last step")
    v = property(lambda self: self._v, doc="(num_envs, nv) velocities after the last step")
    commands = property(lambda self: self._command, doc="(num_envs, 3) each episode's command")
    actions = property(lambda self: self._action, doc="(num_envs, 12) the last actions, clipped")
    previous_actions = property(lambda self: self._prev_action, doc="(num_envs, 12) the actions before them")

    def foot_contacts(self):
        """(num_envs, 4) bool: which feet carry a force after the last step (FL, FR, HL, HR)."""
        f = self._batch.contact_forces()[:, :len(_FEET)]
        return np.abs(f).sum(axis=2) > 0

    def joint_torques(self):
        """The PD's joint torques (num_envs, 12) at the state the last step ended in, toward the targets
        it held: s kp (q_ref − q) − s kd q̇ (N m). Solo's actuators give about 2.7 N m."""
        q, v, iq, iv = self._q, self._v, self._iq, self._iv
        return self._kp[:, iv] * (self._qref[:, iq] - q[:, iq]) - self._kd[:, iv] * v[:, iv]

    def _power(self):
        return np.abs(self.joint_torques() * self._v[:, self._iv]).sum(axis=1)

    def _reward(self):
        q, v, c = self._q, self._v, self._command
        _, _, r2 = _quat_rows(q[:, 3:7])
        g = -r2
        da = ((self._action - self._prev_action) ** 2).sum(axis=1)
        if self._cfg["walk"]:
            track = np.exp(-((v[:, 0:2] - c[:, 0:2]) ** 2).sum(axis=1) / 0.25)
            yaw = np.exp(-(v[:, 5] - c[:, 2]) ** 2 / 0.25)
            r = (1.0 * track + 0.5 * yaw - 2.0 * v[:, 2] ** 2 - 0.05 * (v[:, 3:5] ** 2).sum(axis=1)
                 - 1.0 * (g[:, 0:2] ** 2).sum(axis=1) - 2e-4 * self._power() - 0.01 * da + 0.25)
        else:
            height = np.exp(-(q[:, 2] - 0.235) ** 2 / 0.003)
            upright = (1 - g[:, 2]) / 2
            posture = np.exp(-((q[:, self._iq] - self.q_stand[self._iq]) ** 2).sum(axis=1) / 2)
            r = 1.0 * height + 0.5 * upright + 0.5 * posture - 2e-4 * self._power() - 0.01 * da
        return np.nan_to_num(r * self.dt, nan=0.0)

    def _terminated(self):
        if not self._cfg["walk"]:
            return np.zeros(self.num_envs, dtype=bool)
        _, _, r2 = _quat_rows(self._q[:, 3:7])
        return (self._q[:, 2] < 0.12) | (r2[:, 2] < 0.5)   # below 12 cm, or tilted past 60°

    def close(self):
        self._batch = None
