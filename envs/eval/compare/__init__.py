"""The action-space comparison: each space and seed trained and evaluated in a process of its own (run), gathered
into one table (table), drawn (plots) and ranked over seeds (seeds). Importing this package loads nothing.
"""
