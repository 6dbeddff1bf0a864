"""Isaac Lab against plain MuJoCo: contact-free open-loop alignment (same torques, trajectory and energy errors), the
closed loop with the exported policy under the same pushes, the engines' agreement on canonical contact scenes, and
pinocchio's g(q) and M(q) as the dynamics reference. Importing this package loads nothing.
"""
