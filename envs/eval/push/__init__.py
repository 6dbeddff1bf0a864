"""Pushes against a balance policy: the single-push limit in Isaac Lab and MuJoCo (limit) and which pushes knock it
over by heading and magnitude (headings, headings_run). Importing this package loads nothing.
"""
