"""Export a trained policy: ONNX and TorchScript with the ``realgap.policy/2`` metadata read from the live env (action
terms, observation layout, actuators, rates, description hash), and the v1 → v2 upgrade. Importing this package loads
nothing; the format itself and its loader are :mod:`realgap.envs.format`.
"""
