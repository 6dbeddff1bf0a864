"""realgap.configs."""
