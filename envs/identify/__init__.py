"""Identification of the actuator chain from robot logs: the fits, what they report, the log checks, the excitation
motion that records a log. Importing this package loads nothing.
"""
