"""Learned schedulers: a Gymnasium environment on schedlab's engine, and the way from a trained
policy to a Batsim decision process (the `policy` scheduler). Needs the `rl` extra (gymnasium).

    import gymnasium, schedlab.rl
    env = gymnasium.make("schedlab/Scheduling-v0", platform="lublin256", timing="batsim")

`schedlab.rl.env.SchedulingEnv` is the environment; `schedlab.rl.episodes` where its workloads come
from; `schedlab.rl.cem` a dependency-light trainer of linear scoring policies.
"""

from __future__ import annotations

from typing import Any

ENV_ID = "schedlab/Scheduling-v0"

__all__ = ["ENV_ID", "SchedulingEnv"]


def _register() -> None:
    try:
        import gymnasium
    except ModuleNotFoundError:
        raise ModuleNotFoundError("schedlab.rl needs gymnasium: pip install 'schedlab[rl]' (or gymnasium>=1.0)",
                                  name="gymnasium") from None

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="schedlab.rl.env:SchedulingEnv")


def __getattr__(name: str) -> Any:
    if name == "SchedulingEnv":
        from schedlab.rl.env import SchedulingEnv

        return SchedulingEnv
    raise AttributeError(name)


_register()
