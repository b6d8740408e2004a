"""How far ahead a CALL_ME_LATER must be asked so that Batsim never refuses it.

Batsim aborts ("You asked to be awaken in the past!") when a call's time has passed by the time its
message reaches the server. A reply's decisions are messages from the master to itself, sent one
after another, and the server receives its messages one at a time, each taking its route's full
time. A call that comes first in its reply (`queue.calls_first`) reaches the server one message
time after the request left, plus the time of any message that reached the server's mailbox at that
same instant. The rule: ask a call at least `CALL_MARGIN_MESSAGES` message times ahead (and never
less than `MIN_CALL_DELAY_S`). Its assumption: at most `CALL_MARGIN_MESSAGES - 1` messages, none
slower than the platform's slowest, reach the server at the instant a request is sent.

The message time comes from the platform when the host knows it (`Platform.message_time_s`: the
engine under `--timing batsim` from the platform file's routes, `schedlab serve --platform FILE`, 0
in the ideal engine; the engine tells the processes it hosts too). Otherwise (`serve` under real
Batsim without `--platform`, pybatsim) it is bounded from what the scheduler observes: Batsim sends
the next request only after the server has received every decision of the reply and its
SCHED_READY, so a reply of n messages sent at `now` followed by a request at `next_now` proves one
of the master's messages to itself takes at most `(next_now - now + 1e-6) / (n + 1)` (the 1e-6
covers Batsim printing times with 6 decimals). The least of those bounds is used; it is loose until
a busy moment has been seen, which only makes calls later. It says nothing of the compute hosts'
messages: where they are much slower than the master's own, give `serve --platform`.
"""

from __future__ import annotations

import math

#: never ask a call sooner than this (the ideal engine has no message time)
MIN_CALL_DELAY_S = 0.01
#: a call is asked at least this many message times ahead: its own message, and up to three more
#: that reach Batsim's server at the instant the request leaves
CALL_MARGIN_MESSAGES = 4
#: how far a printed `now` (6 decimals) may be from Batsim's clock, twice (two times are compared)
_PRINTED_S = 1e-6


class WakeupMargin:
    """The least delay of a CALL_ME_LATER from `now`, from the platform or observed replies."""

    def __init__(self) -> None:
        self.platform_s: float | None = None  # the platform's slowest message time, when known
        self.observed_s = math.inf  # the least upper bound of one message's time seen so far
        self._reply: tuple[float, int] | None = None  # (now, number of messages) of the last reply

    def request(self, now: float) -> None:
        """A request (a `decide`) arrives at `now`: the previous reply bounds a message's time."""
        if self._reply is not None:
            sent_s, nb_messages = self._reply
            self.observed_s = min(self.observed_s, (now - sent_s + _PRINTED_S) / (nb_messages + 1))

    def replied(self, now: float, nb_messages: int) -> None:
        self._reply = (now, nb_messages)

    @property
    def message_s(self) -> float:
        """One message's time as the rule uses it: the platform's, else the observed bound, else 0."""
        if self.platform_s is not None:
            return self.platform_s
        return 0.0 if math.isinf(self.observed_s) else self.observed_s

    @property
    def margin_s(self) -> float:
        return max(MIN_CALL_DELAY_S, CALL_MARGIN_MESSAGES * self.message_s)
