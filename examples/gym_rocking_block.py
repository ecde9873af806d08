"""An unmodified gym-style environment, run once on plain Bullet and once per seed inside ``hook(...)``.

``RockingBlockEnv`` is written the usual way for PyBullet (``reset``/``step`` with a loop of
``p.stepSimulation()``, the Gymnasium return conventions) and knows nothing of impact laws:
a free 1 m x 0.5 m x 2 m block (the journal's rocking block, Fig. 1, made 3D) is released
flat ``drop_height`` above a box ground and lands on its four bottom corners at once.  Which
way it rocks depends on the order in which the corner impulses build up, which nobody
knows: Halm & Posa's law makes that a set of outcomes.  Plain Bullet always gives the same
one; inside ``bullet_setimpact.hook(RouthImpact(...), client=env.client, seed=s)`` each seed
samples one (journal eq. 75, Algorithms 1 and 2).

The outcome recorded per episode is the block's largest tilt (roll, pitch) after landing;
the figure scatters it over the seeds, with plain Bullet's single outcome marked.

    python examples/gym_rocking_block.py                       # 64 seeds -> gym_rocking_block.png
    python examples/gym_rocking_block.py --seeds 8 --out fig.png
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pybullet as p

import bullet_setimpact
from bullet_setimpact import RouthImpact

HALF_EXTENTS = (0.5, 0.25, 1.0)  # the block's half sizes [m]


class RockingBlockEnv:
    """A block dropped flat onto the ground; ``step(action)`` pushes it horizontally.

    Observation: base position (3), orientation quaternion (4), linear and angular
    velocity (6).  Action: horizontal force ``(fx, fy)`` [N] on the block's centre during the
    step.  Reward: minus the tilt [rad]; terminated when the block tips over (tilt > 45 deg).
    """

    frame_skip = 4  # Bullet steps of 1/240 s per environment step
    tip_over = math.radians(45.0)

    def __init__(self, drop_height: float = 1.0, friction: float = 0.5) -> None:
        self.client = p.connect(p.DIRECT)
        self.drop_height = drop_height
        self.friction = friction
        self.block = -1

    def reset(self) -> tuple[np.ndarray, dict]:
        """A fresh world: the ground's top face at z = 0, the block at rest ``drop_height`` above it."""
        cid = self.client
        p.resetSimulation(physicsClientId=cid)
        p.setGravity(0.0, 0.0, -9.81, physicsClientId=cid)
        ground = p.createCollisionShape(p.GEOM_BOX, halfExtents=[5.0, 5.0, 0.5], physicsClientId=cid)
        floor = p.createMultiBody(0.0, ground, basePosition=[0.0, 0.0, -0.5], physicsClientId=cid)
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=HALF_EXTENTS, physicsClientId=cid)
        self.block = p.createMultiBody(1.0, shape, basePosition=[0.0, 0.0, HALF_EXTENTS[2] + self.drop_height], physicsClientId=cid)
        for body in (floor, self.block):
            p.changeDynamics(body, -1, lateralFriction=self.friction, physicsClientId=cid)
        return self._observation(), {}

    def step(self, action: np.ndarray | None = None) -> tuple[np.ndarray, float, bool, bool, dict]:
        force = [0.0, 0.0, 0.0] if action is None else [float(action[0]), float(action[1]), 0.0]
        for _ in range(self.frame_skip):
            p.applyExternalForce(self.block, -1, force, [0.0, 0.0, 0.0], p.LINK_FRAME, physicsClientId=self.client)
            p.stepSimulation(physicsClientId=self.client)
        observation = self._observation()
        roll, pitch, _ = p.getEulerFromQuaternion(observation[3:7])
        tilt = math.hypot(roll, pitch)
        return observation, -tilt, tilt > self.tip_over, False, {"roll": roll, "pitch": pitch}

    def close(self) -> None:
        p.disconnect(physicsClientId=self.client)

    def _observation(self) -> np.ndarray:
        position, orientation = p.getBasePositionAndOrientation(self.block, physicsClientId=self.client)
        linear, angular = p.getBaseVelocity(self.block, physicsClientId=self.client)
        return np.array([*position, *orientation, *linear, *angular])


def episode(env: RockingBlockEnv, steps: int) -> tuple[float, float]:
    """Run ``steps`` environment steps without action; the (roll, pitch) of the largest tilt [deg]."""
    peak = (0.0, 0.0)
    for _ in range(steps):
        _, _, terminated, _, info = env.step()
        if math.hypot(info["roll"], info["pitch"]) > math.hypot(*peak):
            peak = (info["roll"], info["pitch"])
        if terminated:
            break
    return math.degrees(peak[0]), math.degrees(peak[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=64, help="hooked episodes, one per seed (default 64)")
    parser.add_argument("--steps", type=int, default=90, help="environment steps per episode (default 90, 1.5 s)")
    parser.add_argument("--out", default="gym_rocking_block.png", help="figure file")
    args = parser.parse_args(argv)

    env = RockingBlockEnv()
    env.reset()
    plain = episode(env, args.steps)  # Bullet's own impact response
    hooked, events = [], []
    for seed in range(args.seeds):
        env.reset()  # build the world, then hook its client
        with bullet_setimpact.hook(RouthImpact("auto", 20), client=env.client, seed=seed) as sim:
            hooked.append(episode(env, args.steps))
        events.append(len(sim.events))
    env.close()

    tilts = np.array(hooked)
    print(f"plain Bullet: peak tilt (roll, pitch) = ({plain[0]:.3f}, {plain[1]:.3f}) deg, the same every run")
    print(f"hooked, {args.seeds} seeds: {np.mean(events):.1f} impact events per episode")
    peaks = np.hypot(tilts[:, 0], tilts[:, 1])
    print(f"  peak |tilt| [deg]: min {peaks.min():.3f}, median {np.median(peaks):.3f}, max {peaks.max():.3f}")
    print(f"  distinct outcomes (0.01 deg): {len(np.unique(np.round(tilts, 2), axis=0))}")

    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(5.0, 4.5))
    axes.scatter(tilts[:, 0], tilts[:, 1], s=14, label=f"hooked, Routh law ({args.seeds} seeds)")
    axes.scatter([plain[0]], [plain[1]], marker="*", s=160, color="tab:red", label="plain Bullet (every run)")
    axes.set_xlabel("peak roll [deg]")
    axes.set_ylabel("peak pitch [deg]")
    axes.set_title("Rocking block landing flat: how it rocks", fontsize=10)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
