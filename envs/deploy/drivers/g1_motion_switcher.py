"""The G1's motion switcher, both sides: the driver's check-and-release, and the service g1_dds_sim serves.

A real G1 boots with a high-level motion service (its locomotion controller) holding the motors; low-level commands
on ``rt/lowcmd`` fight it until it is released. Unitree's own ``g1_low_level_example.py`` therefore asks the motion
switcher first (``MotionSwitcherClient``: ``CheckMode``, then ``ReleaseMode`` until the reported ``name`` is empty).
The RPC is unitree_sdk2's: service ``motion_switcher`` (requests on ``rt/api/motion_switcher/request``, answers on
``.../response``), API version ``1.0.0.1``, ids 1001 CheckMode (answer JSON ``{"form": ..., "name": ...}``; an empty
name: nothing holds the robot), 1002 SelectMode (``{"name": ...}``), 1003 ReleaseMode, 1004/1005 Set/GetSilent.
"""

from __future__ import annotations

import json
import time

RPC_TIMEOUT_CODE = 3104  # unitree_sdk2py.rpc.internal.RPC_ERR_CLIENT_API_TIMEOUT: no service answered


def check_and_release(release: bool, timeout_s: float = 5.0, attempts: int = 5) -> str:
    """Ask the motion switcher whether a high-level service holds the robot, and release it if ``release``.

    Call after ``ChannelFactoryInitialize`` and before the first low-level command.

    Returns:
        What was found, for the driver's log line.

    Raises:
        ValueError: No answer within ``timeout_s`` (names ``--motion_switcher skip`` for a simulator without the
            service); a service holds the robot and ``release`` is false (names ``--motion_switcher release``); it
            is still held after ``attempts`` releases.
    """
    from unitree_sdk2py.comm.motion_switcher.motion_switcher_client import MotionSwitcherClient

    client = MotionSwitcherClient()
    client.SetTimeout(timeout_s)
    client.Init()
    code, result = client.CheckMode()
    if code != 0:
        why = "no answer" if code == RPC_TIMEOUT_CODE else f"error code {code}"
        raise ValueError(
            f"motion_switcher CheckMode: {why} within {timeout_s:g} s. A real G1 serves it (and g1_dds_sim does); on "
            "a simulator without it (unitree_mujoco) pass --motion_switcher skip"
        )
    held = result.get("name", "")
    if not held:
        return "motion switcher: no high-level motion service holds the robot"
    if not release:
        raise ValueError(
            f"the high-level motion service '{held}' holds the robot: low-level commands would fight it. Hang the "
            "robot (it goes limp when released), then rerun with --motion_switcher release (what Unitree's "
            "g1_low_level_example does), or release it from the remote"
        )
    for _ in range(attempts):
        client.ReleaseMode()
        code, result = client.CheckMode()
        if code == 0 and not result.get("name", ""):
            return f"motion switcher: released '{held}'"
        time.sleep(1.0)
    raise ValueError(f"the motion service '{held}' still holds the robot after {attempts} ReleaseMode calls")


def make_service(held: str):
    """The motion switcher service a simulator serves (call ``.Init()`` then ``.Start()`` after
    ``ChannelFactoryInitialize``): it reports ``held`` until released; :attr:`mode` is what it holds now and
    :attr:`calls` counts the calls by API id."""
    from unitree_sdk2py.comm.motion_switcher import motion_switcher_api as api
    from unitree_sdk2py.rpc.server import Server

    class MotionSwitcherService(Server):
        """unitree_sdk2's motion switcher API on a simulator (the robot's form is reported as ``"0"``)."""

        def __init__(self) -> None:
            super().__init__(api.MOTION_SWITCHER_SERVICE_NAME)
            self.mode, self.silent = held, False
            self.calls: dict[int, int] = {}

        def Init(self) -> None:  # noqa: N802 (the SDK's method name)
            self._SetApiVersion(api.MOTION_SWITCHER_API_VERSION)
            for api_id, handler in (
                (api.MOTION_SWITCHER_API_ID_CHECK_MODE, self._check),
                (api.MOTION_SWITCHER_API_ID_SELECT_MODE, self._select),
                (api.MOTION_SWITCHER_API_ID_RELEASE_MODE, self._release),
                (api.MOTION_SWITCHER_API_ID_SET_SILENT, self._set_silent),
                (api.MOTION_SWITCHER_API_ID_GET_SILENT, self._get_silent),
            ):
                self._RegistHandler(api_id, self._counted(api_id, handler), False)

        def _counted(self, api_id: int, handler):
            def call(parameter: str) -> tuple[int, str]:
                self.calls[api_id] = self.calls.get(api_id, 0) + 1
                return handler(parameter)

            return call

        def _check(self, parameter: str) -> tuple[int, str]:
            return 0, json.dumps({"form": "0", "name": self.mode})

        def _select(self, parameter: str) -> tuple[int, str]:
            self.mode = str(json.loads(parameter or "{}").get("name", ""))
            return 0, ""

        def _release(self, parameter: str) -> tuple[int, str]:
            self.mode = ""
            return 0, ""

        def _set_silent(self, parameter: str) -> tuple[int, str]:
            self.silent = bool(json.loads(parameter or "{}").get("silent", False))
            return 0, ""

        def _get_silent(self, parameter: str) -> tuple[int, str]:
            return 0, json.dumps({"silent": self.silent})

    return MotionSwitcherService()
