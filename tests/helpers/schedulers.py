"""Schedulers made to fail on purpose."""

from __future__ import annotations

from schedlab.schedulers.easy import EasyBackfilling


class FailingEasy(EasyBackfilling):
    """EASY that raises `error` when deciding at t >= 5 (tests set `error` and `__module__`: one of
    schedlab's modules makes it a bug of ours, another a user's scheduler's failure)."""

    error: BaseException = ValueError("bad state")

    def decide(self, now):
        if now >= 5:
            raise self.error
        return super().decide(now)
