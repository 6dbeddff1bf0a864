"""realgap.envs."""
