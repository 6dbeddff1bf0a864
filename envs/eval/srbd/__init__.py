"""The SRBD balance controller evaluated: its law as a policy of the Isaac Lab balance task (lab) and the three
controllers under the same pushes in both engines (balance). Importing this package loads nothing.
"""
