#!/usr/bin/python3
"""Trains Solo-12 to walk forward on mbs.envs' "solo-walk" with Augmented Random Search (Mania, Guy and
Recht 2018, "Simple random search provides a competitive approach to reinforcement learning", ARS V2-t:
a linear policy on normalised observations, antithetic perturbations, the best directions kept, the
step scaled by their returns' spread), in numpy alone, then plays the policy back.

    /usr/bin/python3 examples/train_walk.py --minutes 10 --out walk_policy.npz    # at most 30: the issue's budget
    /usr/bin/python3 examples/train_walk.py --play examples/data/walk_policy.npz --html walk.html

examples/data/walk_policy.npz is the policy the first command wrote on 2026-12-02 (seed 1, 10 minutes).

The policy: a = clip(M [(o − μ) / σ, sin φ, cos φ, 1], −1, 1), o the task's 49 observations, φ a gait
clock (2π t / 0.5 s, t the episode's time: ARS's linear policies need a rhythm to make a gait
from), M of 12 x 52; the actions are the task's joint targets (q_stand + 0.3 a, held by its PD).
Training: the task's rewards and domain randomisation (friction, ground stiffness and damping, motor
strength, added base mass, pushes), the command fixed to walking straight at 0.15-0.35 m/s, and four
shaping terms of the search's own, each found needed by looking at what the policy did:
  --progress 10 per metre walked forward, each period's advance counted up to the commanded speed's:
                the task's velocity kernel pays 78 % of its reward for standing still, and random
                search stayed there; uncapped, it ran at 1.7 m/s;
  --smooth 2    per second, |a − a_prev|²: without it the feet pattered at 11 Hz;
  --effort 1    per second, the squared PD torque past Solo's 2.7 N m;
  --step-bonus 1 per second of a foot's flight past 0.1 s, paid at its touch-down: without it the
                robot shuffled on feet that never lifted, sliding them 1.8 m along the ground.
2N environments of one mbs.Batch per iteration, each rolling one perturbed policy for 3 s (an episode
that ends early keeps the return it had).

Playback: the policy on held-out randomisation seeds in the vector environment (the distance each walks
in 5 s), then in scenarios/solo_trot.ini through mbs.simulate (./sim's loop: expo at 2 ms, the policy
as the control callback at 10 ms handing its PD to the stepper), which writes the replay page.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mbs  # noqa: E402
import mbs.envs  # noqa: E402

PERIOD = 0.5      # s: the gait clock's period
NFEAT = 49 + 3    # observations, sin φ, cos φ, 1
COMMAND = {"command_x": (0.15, 0.35), "command_y": (0.0, 0.0), "command_yaw": (0.0, 0.0)}


def features(obs, mu, sigma, t):
    """[(o − μ) / σ, sin φ, cos φ, 1] for each row of obs at episode times t (n,)."""
    z = (obs - mu) / sigma
    ph = 2 * np.pi * t / PERIOD
    return np.concatenate([z, np.sin(ph)[:, None], np.cos(ph)[:, None], np.ones((len(t), 1))], axis=1)


class Stats:
    """Running mean and variance of the observations (Welford, batched), ARS V2's normalisation."""

    def __init__(self, n):
        self.n, self.mean, self.m2 = 0, np.zeros(n), np.zeros(n)

    def add(self, x):
        k = len(x)
        if k == 0:
            return
        mb, vb = x.mean(axis=0), x.var(axis=0)
        d, tot = mb - self.mean, self.n + k
        self.mean += d * k / tot
        self.m2 += vb * k + d * d * self.n * k / tot
        self.n = tot

    def sigma(self):
        return np.sqrt(np.maximum(self.m2 / max(self.n, 1), 1e-4))


def rollouts(env, Ms, mu, sigma, steps, stats=None, progress=0.0, smooth=0.0, effort=0.0, step_bonus=0.0):
    """Each environment i runs policy Ms[i] (12 x 52) for `steps` periods from a reset; returns the
    returns (n,) (the task's rewards plus `progress` per metre the base went forward, each period's
    advance counted up to the commanded speed's: no gain in running faster than asked), the base's
    forward distance (n,) and whether each stayed up. smooth and effort weigh, per second, the change
    of the actions between periods (|a − a_prev|²) and the PD's torque past Solo's 2.7 N m (squared);
    step_bonus pays each touch-down its foot's flight time past 0.1 s."""
    n = env.num_envs
    obs, _ = env.reset()
    alive = np.ones(n, dtype=bool)
    ret, t = np.zeros(n), np.zeros(n)
    x0 = env.q[:, 0].copy()
    x_end, x_prev, gain = x0.copy(), x0.copy(), np.zeros(n)
    air, was = np.zeros((n, 4)), np.ones((n, 4), dtype=bool)
    for _ in range(steps):
        f = features(obs, mu, sigma, t)
        if stats is not None:
            stats.add(obs[alive].astype(np.float64))
        a = np.clip(np.einsum("nij,nj->ni", Ms, f), -1, 1)
        obs, r, term, trunc, _ = env.step(a)
        tau = env.joint_torques()
        shaping = (smooth * ((env.actions - env.previous_actions) ** 2).sum(axis=1)
                   + effort * (np.maximum(np.abs(tau) - 2.7, 0.0) ** 2).sum(axis=1))
        # feet that step: each touch-down pays its flight time past 0.1 s (a foot dragged along never
        # lifts and earns nothing)
        touch = env.foot_contacts()
        stepping = np.where(touch & ~was, air - 0.1, 0.0).sum(axis=1)
        air = np.where(touch, 0.0, air + env.dt)
        was = touch
        ret += np.where(alive, r - shaping * env.dt + step_bonus * stepping, 0.0)
        x = env.q[:, 0]
        gain += np.where(alive, np.minimum(x - x_prev, env.commands[:, 0] * env.dt), 0.0)
        x_prev = x.copy()
        x_end = np.where(alive, x, x_end)
        alive &= ~(term | trunc)
        t += env.dt
    return ret + progress * gain, x_end - x0, alive


def train(args):
    N, b, alpha, nu, steps = args.directions, args.top, args.alpha, args.noise, int(round(args.horizon / 0.01))
    env = mbs.envs.make("solo-walk", num_envs=2 * N, seed=args.seed, nthreads=args.threads, ranges=COMMAND,
                        max_steps=steps + 1)
    rng = np.random.default_rng(args.seed)
    M = np.zeros((12, NFEAT))
    stats = Stats(49)
    deadline = time.time() + 60 * args.minutes
    it, t0, best = 0, time.time(), -np.inf
    while time.time() < deadline and (args.iterations <= 0 or it < args.iterations):
        mu, sigma = stats.mean.copy(), stats.sigma()
        delta = rng.standard_normal((N, 12, NFEAT))
        Ms = np.concatenate([M + nu * delta, M - nu * delta])
        ret, dist, up = rollouts(env, Ms, mu, sigma, steps, stats, args.progress, args.smooth, args.effort,
                                 args.step_bonus)
        rp, rm = ret[:N], ret[N:]
        keep = np.argsort(-np.maximum(rp, rm))[:b]
        sr = np.concatenate([rp[keep], rm[keep]]).std() + 1e-8
        M += alpha / (b * sr) * np.einsum("k,kij->ij", rp[keep] - rm[keep], delta[keep])
        it += 1
        if it % args.report == 0 or time.time() >= deadline:
            best = max(best, ret.mean())
            print("iteration %4d  %6.0f s  return %.3f (best direction %.3f)  forward %.2f m in %.0f s, %d%% up"
                  % (it, time.time() - t0, ret.mean(), np.maximum(rp, rm).max(), dist.mean(), args.horizon,
                     100 * up.mean()), flush=True)
            np.savez(args.out, M=M, mu=stats.mean, sigma=stats.sigma(), iterations=it, seconds=time.time() - t0)
    np.savez(args.out, M=M, mu=stats.mean, sigma=stats.sigma(), iterations=it, seconds=time.time() - t0)
    print("trained %d iterations in %.0f s: %s" % (it, time.time() - t0, args.out))


def play(args):
    p = np.load(args.play)
    M, mu, sigma = p["M"], p["mu"], p["sigma"]
    # held-out randomisation: seeds the training never drew from
    env = mbs.envs.make("solo-walk", num_envs=args.eval_envs, seed=10_000 + args.seed, ranges=dict(COMMAND, command_x=(0.25, 0.25)),
                        max_steps=501)
    Ms = np.broadcast_to(M, (env.num_envs,) + M.shape)
    _, dist, up = rollouts(env, Ms, mu, sigma, 500)
    print("held-out seeds: %d environments, 5 s each: forward %.2f m (min %.2f, max %.2f), %d of %d stayed up"
          % (env.num_envs, dist.mean(), dist.min(), dist.max(), up.sum(), env.num_envs))
    # ./sim's loop on solo_trot.ini's robot and ground, nominal: the policy as the control callback
    one = mbs.envs.make("solo-walk", num_envs=1, seed=0, randomize=False)
    command, action = np.array([[0.25, 0.0, 0.0]]), np.zeros((1, 12))
    kp, kd = np.zeros(one.nv), np.zeros(one.nv)
    kp[one._iv], kd[one._iv] = one.KP, one.KD   # the task's PD on the 12 joints
    q_ref = one.q_stand.copy()

    def control(t, q, v, tau, system):
        o = one.observation(q[None], v[None], command, action)
        a = np.clip(M @ features(o, mu, sigma, np.array([t]))[0], -1, 1)
        action[0] = a
        q_ref[one._iq] = one.q_stand[one._iq] + 0.3 * a
        system.set_impedance(kp, kd, q_ref)

    root = mbs.envs.data_dir()
    summary, _ = mbs.simulate(os.path.join(root, "scenarios", "solo_trot.ini"),
                              {"controller.type": "none", "controller.dt": 0.01, "stepper.name": "expo",
                               "stepper.dt": 0.002, "run.duration": 5},
                              control=control, html=args.html)
    print("playback in scenarios/solo_trot.ini (5 s): status %s, distance %.2f m, max tilt %s deg, %s foot "
          "touch-downs, largest slip %.3f m%s" % (summary["status"], summary["distance_m"], summary["max_tilt_deg"],
                                                  summary["foot_touchdowns"], summary["max_slip_m"],
                                                  ", replay page " + args.html if args.html else ""))
    return dist, up, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10, help="training budget (wall clock)")
    ap.add_argument("--iterations", type=int, default=0, help="stop after this many iterations (0: the budget only)")
    ap.add_argument("--directions", type=int, default=32, help="N: perturbations per iteration (2N environments)")
    ap.add_argument("--top", type=int, default=16, help="b: the best directions kept")
    ap.add_argument("--alpha", type=float, default=0.02, help="step size")
    ap.add_argument("--noise", type=float, default=0.03, help="ν: perturbation scale")
    ap.add_argument("--horizon", type=float, default=3.0, help="rollout length (s)")
    ap.add_argument("--threads", type=int, default=1, help="threads stepping the batch")
    ap.add_argument("--progress", type=float, default=10.0,
                    help="return per metre walked forward, added to the task's: its velocity-tracking kernel "
                         "(exp(-|v - c|^2 / 0.25)) pays 78 %% of its reward for standing still at c = 0.25 m/s, a "
                         "local optimum random search does not leave")
    ap.add_argument("--smooth", type=float, default=2.0,
                    help="per second, the weight of |a - a_prev|^2 subtracted from the return: without it the "
                         "search found feet that patter at 11 Hz")
    ap.add_argument("--effort", type=float, default=1.0,
                    help="per second, the weight of the squared torque past Solo's 2.7 N m subtracted from the return")
    ap.add_argument("--step-bonus", type=float, default=1.0,
                    help="paid per second of a foot's flight past 0.1 s at its touch-down: without it the search "
                         "found Solo shuffling on feet that never lift, sliding them along the ground")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=int, default=10, help="print every this many iterations")
    ap.add_argument("--out", default="walk_policy.npz")
    ap.add_argument("--play", help="a trained policy (.npz) to play back instead of training")
    ap.add_argument("--eval-envs", type=int, default=16, help="held-out environments in the playback")
    ap.add_argument("--html", default="", help="the playback's replay page")
    args = ap.parse_args()
    if args.play:
        play(args)
    else:
        train(args)


if __name__ == "__main__":
    main()
