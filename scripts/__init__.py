"""realgap's jobs (train, play, evaluate, export, ...), one module each: the subcommands of the ``realgap`` command
(``scripts/__main__.py``), installed as ``realgap.scripts``; in a clone each also runs as ``python scripts/<job>.py``.
"""
