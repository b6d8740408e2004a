"""The part of SimGrid 3.32 that Batsim 4.2.1's timing depends on, for `--timing batsim`.

Actors are generators yielding simcalls; they run in SimGrid's order (EngineImpl::run): every ready
actor runs to its next simcall, then the simcalls are handled in the order the actors ran; an
immediate simcall (isend, irecv, actor creation, kill) makes its actor ready for the next sub-round,
a blocking one (wait, sleep) parks it. One mailbox (Batsim's "server", on the master host): a send and
a receive meet in FIFO order, and their 1-byte communication starts then: a latency phase, then a
transfer whose rate is set at the next solve (the L07 model). Time advances by the least remaining
latency, transfer or sleep; every action is updated with SimGrid's `double_update` (a remainder
below 1e-9 is zero), and the actions that end in one step are handled in creation order.

Sleeps ending at the same step wake their actors in creation order; these rules decide which of
Batsim's simultaneous events share a message with the scheduler, so they are kept exactly (the
timing tests compare jobs.csv with real Batsim's byte for byte).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Generator
from typing import Any

from schedlab.engine.batsim_network import Route

SURF_PRECISION = 1e-9  # sg_surf_precision
MAXMIN_PRECISION = 1e-5  # sg_maxmin_precision (remains use both: 1e-14)
MESSAGE_BYTES = 1.0  # Batsim's IPP messages (ipp.cpp: message_size = 1)

Simcall = tuple[Any, ...]
ActorBody = Generator[Simcall, Any, None]


def _update(value: float, delta: float, precision: float) -> float:
    """SimGrid's double_update."""
    value -= delta
    return 0.0 if value < precision else value


class Actor:
    __slots__ = ("alive", "answer", "blocked_on", "body", "name", "route", "simcall")

    def __init__(self, name: str, route: Route, body: ActorBody) -> None:
        self.name, self.route, self.body = name, route, body
        self.answer: Any = None
        self.simcall: Simcall | None = None
        self.alive = True
        self.blocked_on: Comm | _Sleep | None = None


class Comm:
    """A message in the mailbox: a send (with its payload) and/or a receive."""

    __slots__ = ("done", "payload", "receiver", "sender", "waiters")

    def __init__(self) -> None:
        self.sender: Actor | None = None
        self.receiver: Actor | None = None
        self.payload: Any = None
        self.done = False
        self.waiters: list[Actor] = []


class Action:
    """A running communication: a latency phase, then `remains` bytes at `rate`."""

    __slots__ = ("comm", "latency", "penalty", "rate", "remains", "seq", "transfer_rate")

    def __init__(self, comm: Comm, seq: int) -> None:
        self.comm, self.seq = comm, seq
        self.latency = 0.0
        self.remains = MESSAGE_BYTES
        self.rate = 0.0  # the rate of the last solve (0 during the latency phase)
        self.transfer_rate = 0.0
        self.penalty = 1.0  # 0 while in the latency phase


class _Sleep:
    """A sleep's place in the kernel's parallel lists (what an actor is blocked on)."""

    __slots__ = ("seq",)

    def __init__(self, seq: int) -> None:
        self.seq = seq


class Kernel:
    def __init__(self) -> None:
        self.now = 0.0
        self._ready: list[Actor] = []
        self._comms: list[Action] = []
        # sleeps, in creation order: who sleeps, the time left (SimGrid's max_duration) and the
        # creation number (actions ending in one step are handled in creation order)
        self._sleepers: list[Actor] = []
        self._sleep_left: list[float] = []
        self._sleep_seq: list[int] = []
        self._seq = 0
        self._mailbox: deque[Comm] = deque()  # unmatched sends, or the server's pending receive

    def spawn(self, name: str, route: Route, body: ActorBody) -> Actor:
        actor = Actor(name, route, body)
        self._ready.append(actor)
        return actor

    def mailbox_empty(self) -> bool:
        """Read directly, as Batsim's server does (not a simcall)."""
        return not self._mailbox

    # ------------------------------------------------------------------ simcalls
    def _wake(self, actor: Actor, value: Any = None) -> None:
        actor.answer = value
        actor.blocked_on = None
        self._ready.append(actor)

    def _match(self, actor: Actor, payload: Any, sending: bool) -> None:
        mailbox = self._mailbox
        # a send meets a pending receive and vice versa (only the server receives: at most one)
        other = mailbox[0] if mailbox and (mailbox[0].receiver is not None) is sending else None
        if other is None:
            comm = Comm()
            mailbox.append(comm)
        else:
            comm = mailbox.popleft()
        if sending:
            comm.sender, comm.payload = actor, payload
        else:
            comm.receiver = actor
        if other is not None:  # both sides are there: the communication starts
            route = comm.sender.route  # type: ignore[union-attr]
            self._seq += 1
            action = Action(comm, self._seq)
            action.latency = route.latency_s
            if route.rate_bytes_per_s == math.inf:  # a route without links: nothing to transfer
                action.remains, action.transfer_rate = 0.0, 1.0
            else:
                action.transfer_rate = route.rate_bytes_per_s / MESSAGE_BYTES
            if action.latency > 0:
                action.penalty = 0.0
            self._comms.append(action)
        self._wake(actor, comm)

    def _handle(self, actor: Actor) -> bool:
        call, actor.simcall = actor.simcall, None
        kind = call[0]  # type: ignore[index]
        if kind == "isend":
            self._match(actor, call[1], sending=True)  # type: ignore[index]
        elif kind == "irecv":
            self._match(actor, None, sending=False)
        elif kind == "wait":
            comm: Comm = call[1]  # type: ignore[index]
            if comm.done:
                self._wake(actor, comm.payload)
            else:
                comm.waiters.append(actor)
                actor.blocked_on = comm
        elif kind == "sleep":
            assert call[1] > 0, "sleep_for skips sleeps of no time, as s4u does"  # type: ignore[index]
            self._seq += 1
            self._sleepers.append(actor)
            self._sleep_left.append(call[1])  # type: ignore[index]
            self._sleep_seq.append(self._seq)
            actor.blocked_on = _Sleep(self._seq)
        elif kind == "spawn":
            _, name, route, body = call  # type: ignore[misc]
            self._wake(actor, self.spawn(name, route, body))
        elif kind == "kill":
            self._kill(call[1])  # type: ignore[index]
            self._wake(actor)
        elif kind == "pause":  # the caller of `steps` resumes it
            return True
        else:
            raise RuntimeError(f"unknown simcall {call!r}")
        return False

    def _kill(self, victim: Actor) -> None:
        if not victim.alive:
            return
        victim.alive = False
        if victim in self._ready:
            self._ready.remove(victim)
        blocked = victim.blocked_on
        if isinstance(blocked, _Sleep):
            index = self._sleep_seq.index(blocked.seq)
            del self._sleepers[index], self._sleep_left[index], self._sleep_seq[index]
        elif blocked is not None:
            raise RuntimeError("killing an actor blocked in a communication is not modelled")
        victim.blocked_on = None
        victim.body.close()

    # ------------------------------------------------------------------ time
    def _solve(self) -> bool:
        """One step of the models; False when nothing is left to happen."""
        comms, left = self._comms, self._sleep_left
        if not comms and not left:
            return False
        delta = min(left) if left else -1.0
        for action in comms:
            if action.penalty > 0:
                action.rate = action.transfer_rate  # alone on its links: no sharing
            if action.rate > 0:
                time_left = action.remains / action.rate if action.remains > 0 else 0.0
                if delta < 0 or time_left < delta:
                    delta = time_left
        for action in comms:
            if action.latency > 0 and (delta < 0 or action.latency < delta):
                delta = action.latency
        if delta < 0:
            return False
        self.now += delta
        done: list[tuple[int, Any]] = []
        if comms:
            for action in comms:
                if action.latency > 0:
                    action.latency = _update(action.latency, delta, SURF_PRECISION) if action.latency > delta else 0.0
                    if action.latency <= 0.0:
                        action.penalty = 1.0  # transfers from the next solve
                action.remains = _update(action.remains, action.rate * delta, MAXMIN_PRECISION * SURF_PRECISION)
                if action.remains <= 0 and action.penalty > 0:
                    done.append((action.seq, action))
            if done:
                self._comms = [action for action in comms if not (action.remains <= 0 and action.penalty > 0)]
        if left:
            # SimGrid's double_update of every sleep's max_duration: a remainder below 1e-9 ends it
            left = [value - delta for value in left]
            if min(left) < SURF_PRECISION:
                keep = [i for i, value in enumerate(left) if value >= SURF_PRECISION]
                done += [(self._sleep_seq[i], self._sleepers[i]) for i, value in enumerate(left)
                         if value < SURF_PRECISION]
                self._sleepers = [self._sleepers[i] for i in keep]
                self._sleep_seq = [self._sleep_seq[i] for i in keep]
                left = [left[i] for i in keep]
            self._sleep_left = left
        if done:
            if len(done) > 1:
                done.sort(key=lambda item: item[0])  # in creation order
            for _, what in done:
                if isinstance(what, Action):
                    comm = what.comm
                    comm.done = True
                    for waiter in comm.waiters:  # in the order they waited
                        if waiter.alive:
                            self._wake(waiter, comm.payload)
                    comm.waiters = []
                elif what.alive:
                    self._wake(what)
        return True

    def run(self) -> None:
        for actor in self.steps():
            raise RuntimeError(f"actor {actor.name!r} paused outside a pausing run")

    def steps(self) -> Generator[Actor, None, None]:
        """The simulation, pausing where an actor yields the ("pause",) simcall: yields that actor,
        and on resumption runs it on to its next simcall, handled in the pausing one's place, so
        the actors' interleaving is the one it would be had the actor not paused."""
        while True:
            while self._ready:
                ran, self._ready = self._ready, []
                for actor in ran:
                    if not actor.alive:
                        continue
                    try:
                        actor.simcall = actor.body.send(actor.answer)
                    except StopIteration:
                        actor.alive = False
                        actor.simcall = None
                for actor in ran:
                    while actor.simcall is not None and self._handle(actor):
                        yield actor
                        try:
                            actor.simcall = actor.body.send(None)
                        except StopIteration:
                            actor.alive = False
                            actor.simcall = None
            if not self._solve():
                return


def put(payload: Any) -> Generator[Simcall, Any, None]:
    """Mailbox::put to the server: isend, then wait for the end of the communication."""
    comm = yield ("isend", payload)
    yield ("wait", comm)


def sleep_for(duration_s: float) -> Generator[Simcall, Any, None]:
    if duration_s > 0:  # s4u's sleep_for is a no-op otherwise
        yield ("sleep", duration_s)
