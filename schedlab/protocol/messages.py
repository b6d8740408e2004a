"""Batsim 4.2.1 JSON messages, parsed once into typed events and encoded back.

Both directions live here: Batsim -> scheduler events (parsed by the REP side, encoded by our REQ
side) and scheduler -> Batsim decisions (encoded by the REP side, parsed by the REQ side). Parsers
are looked up in dicts keyed by `EventType`. Spec: Batsim 4.2.1's protocol documentation
(`docs/protocol.rst` of its source) and its messages as real runs send them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, Any

from procset import ProcSet

from schedlab.errors import ProtocolError
from schedlab.model import (
    CallMeLater,
    Decision,
    Execute,
    Job,
    JobState,
    Kill,
    Platform,
    Reject,
    SetMetadata,
)
from schedlab.parsing import json_loads
from schedlab.protocol import batsim_numbers
from schedlab.protocol.batsim_numbers import NumberError
from schedlab.protocol.jobs import JobFieldError, job_from_json, job_to_json


class EventType(Enum):
    # Batsim -> scheduler
    SIMULATION_BEGINS = "SIMULATION_BEGINS"
    JOB_SUBMITTED = "JOB_SUBMITTED"
    JOB_COMPLETED = "JOB_COMPLETED"
    JOB_KILLED = "JOB_KILLED"
    REQUESTED_CALL = "REQUESTED_CALL"
    NOTIFY = "NOTIFY"
    RESOURCE_STATE_CHANGED = "RESOURCE_STATE_CHANGED"
    ANSWER = "ANSWER"
    QUERY = "QUERY"
    SIMULATION_ENDS = "SIMULATION_ENDS"
    # scheduler -> Batsim
    EXECUTE_JOB = "EXECUTE_JOB"
    REJECT_JOB = "REJECT_JOB"
    CALL_ME_LATER = "CALL_ME_LATER"
    KILL_JOB = "KILL_JOB"
    SET_JOB_METADATA = "SET_JOB_METADATA"
    REGISTER_JOB = "REGISTER_JOB"
    REGISTER_PROFILE = "REGISTER_PROFILE"
    SET_RESOURCE_STATE = "SET_RESOURCE_STATE"
    CHANGE_JOB_STATE = "CHANGE_JOB_STATE"


# ---------------------------------------------------------------------------------------- typed events


@dataclass(frozen=True, slots=True)
class SimulationBegins:
    timestamp: float
    platform: Platform
    data: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class JobSubmitted:
    timestamp: float
    job: Job


@dataclass(frozen=True, slots=True)
class JobCompleted:
    timestamp: float
    job_id: str
    state: JobState
    return_code: int
    alloc: ProcSet


@dataclass(frozen=True, slots=True)
class JobsKilled:
    timestamp: float
    job_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RequestedCall:
    timestamp: float


@dataclass(frozen=True, slots=True)
class Notify:
    timestamp: float
    kind: str
    data: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class SimulationEnds:
    timestamp: float


@dataclass(frozen=True, slots=True)
class Other:
    """An event we do not act on (resource state changes, queries...), kept for completeness."""

    timestamp: float
    type: EventType
    data: Mapping[str, Any] = field(repr=False)


Event = SimulationBegins | JobSubmitted | JobCompleted | JobsKilled | RequestedCall | Notify | SimulationEnds | Other


@dataclass(frozen=True, slots=True)
class Message:
    now: float
    events: tuple[Any, ...]


# ---------------------------------------------------------------------------------------- parsing


def _get(data: Mapping[str, Any], key: str, kind: EventType) -> Any:
    if key not in data:
        raise ProtocolError(f"{kind.value} event without '{key}'")
    return data[key]


def _alloc(text: Any, kind: EventType) -> ProcSet:
    if not isinstance(text, str):
        raise ProtocolError(f"{kind.value}: alloc must be a string like '0-3 7', got {text!r}")
    try:
        return ProcSet.from_str(text) if text.strip() else ProcSet()
    except (ValueError, TypeError):
        raise ProtocolError(f"{kind.value}: bad interval set {text!r}") from None


def _parse_begins(ts: float, data: Mapping[str, Any]) -> SimulationBegins:
    resources = _get(data, "compute_resources", EventType.SIMULATION_BEGINS)
    try:
        ordered = sorted(resources, key=lambda r: int(r["id"]))
        names = tuple(str(r["name"]) for r in ordered)
    except (TypeError, KeyError, ValueError):
        raise ProtocolError("SIMULATION_BEGINS: bad compute_resources") from None
    if [int(r["id"]) for r in ordered] != list(range(len(ordered))):
        raise ProtocolError("SIMULATION_BEGINS: compute resource ids are not 0..n-1")
    message_time_s = data.get(MESSAGE_TIME_KEY)  # only our engine sends it, to the processes it hosts
    if message_time_s is not None and (isinstance(message_time_s, bool) or not isinstance(message_time_s, int | float)
                                       or not message_time_s >= 0):
        raise ProtocolError(f"SIMULATION_BEGINS: {MESSAGE_TIME_KEY} must be a number >= 0, got {message_time_s!r}")
    return SimulationBegins(ts, Platform(names, source="batsim", message_time_s=message_time_s), data)


def _parse_submitted(ts: float, data: Mapping[str, Any]) -> JobSubmitted:
    job_id = _get(data, "job_id", EventType.JOB_SUBMITTED)
    raw = data.get("job")
    if raw is None:
        raise ProtocolError(f"JOB_SUBMITTED for '{job_id}' without its 'job' object")
    try:
        job = job_from_json(raw)
    except JobFieldError as exc:
        raise ProtocolError(f"JOB_SUBMITTED for '{job_id}': field '{exc.field}': {exc}") from None
    if job.id != job_id:
        raise ProtocolError(f"JOB_SUBMITTED: job_id '{job_id}' differs from job.id '{job.id}'")
    return JobSubmitted(ts, job)


def _parse_completed(ts: float, data: Mapping[str, Any]) -> JobCompleted:
    job_id = _get(data, "job_id", EventType.JOB_COMPLETED)
    try:
        state = JobState(_get(data, "job_state", EventType.JOB_COMPLETED))
    except ValueError:
        raise ProtocolError(f"JOB_COMPLETED for '{job_id}': unknown job_state {data['job_state']!r}") from None
    return JobCompleted(ts, str(job_id), state, int(data.get("return_code", 0)),
                        _alloc(data.get("alloc", ""), EventType.JOB_COMPLETED))


def _parse_killed(ts: float, data: Mapping[str, Any]) -> JobsKilled:
    return JobsKilled(ts, tuple(str(j) for j in _get(data, "job_ids", EventType.JOB_KILLED)))


def _parse_notify(ts: float, data: Mapping[str, Any]) -> Notify:
    return Notify(ts, str(_get(data, "type", EventType.NOTIFY)), data)


_EVENT_PARSERS: dict[EventType, Callable[[float, Mapping[str, Any]], Any]] = {
    EventType.SIMULATION_BEGINS: _parse_begins,
    EventType.JOB_SUBMITTED: _parse_submitted,
    EventType.JOB_COMPLETED: _parse_completed,
    EventType.JOB_KILLED: _parse_killed,
    EventType.REQUESTED_CALL: lambda ts, data: RequestedCall(ts),
    EventType.NOTIFY: _parse_notify,
    EventType.SIMULATION_ENDS: lambda ts, data: SimulationEnds(ts),
}


def _parse_execute(data: Mapping[str, Any]) -> Decision:
    return Execute(str(_get(data, "job_id", EventType.EXECUTE_JOB)),
                   _alloc(_get(data, "alloc", EventType.EXECUTE_JOB), EventType.EXECUTE_JOB))


def _parse_call(data: Mapping[str, Any]) -> Decision:
    at = _get(data, "timestamp", EventType.CALL_ME_LATER)
    if isinstance(at, bool) or not isinstance(at, int | float):
        raise ProtocolError(f"CALL_ME_LATER timestamp must be a number, got {at!r}")
    return CallMeLater(float(at))


_DECISION_PARSERS: dict[EventType, Callable[[Mapping[str, Any]], Decision]] = {
    EventType.EXECUTE_JOB: _parse_execute,
    EventType.REJECT_JOB: lambda d: Reject(str(_get(d, "job_id", EventType.REJECT_JOB))),
    EventType.CALL_ME_LATER: _parse_call,
    EventType.KILL_JOB: lambda d: Kill(tuple(str(j) for j in _get(d, "job_ids", EventType.KILL_JOB))),
    EventType.SET_JOB_METADATA: lambda d: SetMetadata(str(_get(d, "job_id", EventType.SET_JOB_METADATA)),
                                                      str(_get(d, "metadata", EventType.SET_JOB_METADATA))),
}


def _envelope(raw: bytes | str, loads: Callable[[bytes | str], Any] = json_loads
              ) -> tuple[float, list[tuple[float, EventType, Mapping[str, Any]]]]:
    """Check the common shape: {"now": number, "events": [{timestamp, type, data}]}, ordered."""
    try:
        doc = loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, NumberError) as exc:
        raise ProtocolError(f"malformed JSON message: {exc}") from None
    if not isinstance(doc, dict) or "now" not in doc or "events" not in doc:
        raise ProtocolError("message must be an object with 'now' and 'events'")
    now = doc["now"]
    if isinstance(now, bool) or not isinstance(now, int | float) or not isinstance(doc["events"], list):
        raise ProtocolError("message 'now' must be a number and 'events' a list")
    events: list[tuple[float, EventType, Mapping[str, Any]]] = []
    previous = -float("inf")
    for index, event in enumerate(doc["events"]):
        if not isinstance(event, dict):
            raise ProtocolError(f"event #{index} is not an object")
        ts, kind, data = event.get("timestamp"), event.get("type"), event.get("data", {})
        if isinstance(ts, bool) or not isinstance(ts, int | float):
            raise ProtocolError(f"event #{index} has no numeric timestamp")
        try:
            etype = EventType(kind)
        except ValueError:
            raise ProtocolError(f"event #{index} has unknown type {kind!r}") from None
        if ts < previous:
            raise ProtocolError(f"event #{index} ({kind}) at {ts} is earlier than the previous one ({previous})")
        if not isinstance(data, dict):
            raise ProtocolError(f"event #{index} ({kind}): data is not an object")
        previous = ts
        events.append((float(ts), etype, data))
    return float(now), events


def parse_message(raw: bytes | str) -> Message:
    """A Batsim -> scheduler message. Timestamps must be non-decreasing and <= now (Batsim asserts)."""
    now, events = _envelope(raw)
    typed = []
    for ts, etype, data in events:
        if ts > now + 1e-9:
            raise ProtocolError(f"{etype.value} event at {ts} is after the message's now={now}")
        parser = _EVENT_PARSERS.get(etype)
        typed.append(parser(ts, data) if parser else Other(ts, etype, data))
    return Message(now, tuple(typed))


def parse_reply(raw: bytes | str) -> tuple[float, list[tuple[float, Decision]]]:
    """A scheduler -> Batsim message: its `now` and (timestamp, decision) pairs, every number read
    as Batsim reads it (RapidJSON's default mode: batsim_numbers)."""
    now, events = _envelope(raw, batsim_numbers.loads)
    decisions = []
    for ts, etype, data in events:
        parser = _DECISION_PARSERS.get(etype)
        if parser is None:
            raise ProtocolError(f"decision type {etype.value} is not supported by schedlab's engine")
        decisions.append((ts, parser(data)))
    return now, decisions


# ---------------------------------------------------------------------------------------- encoding


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()


def _event(now: float, kind: EventType, data: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": now, "type": kind.value, "data": data}


def _reject_events(now: float, d: Reject) -> list[dict[str, Any]]:
    metadata = [_event(now, EventType.SET_JOB_METADATA, {"job_id": d.job_id, "metadata": d.reason})] if d.reason else []
    return [*metadata, _event(now, EventType.REJECT_JOB, {"job_id": d.job_id})]


#: Each decision type's Batsim events, keyed by type (the inverse of _DECISION_PARSERS).
_DECISION_ENCODERS: dict[type, Callable[[float, Any], list[dict[str, Any]]]] = {
    Execute: lambda now, d: [_event(now, EventType.EXECUTE_JOB, {"job_id": d.job_id, "alloc": str(d.alloc)})],
    Reject: _reject_events,
    CallMeLater: lambda now, d: [_event(now, EventType.CALL_ME_LATER, {"timestamp": d.at_s})],
    Kill: lambda now, d: [_event(now, EventType.KILL_JOB, {"job_ids": list(d.job_ids)})],
    SetMetadata: lambda now, d: [_event(now, EventType.SET_JOB_METADATA, {"job_id": d.job_id,
                                                                          "metadata": d.metadata})],
}


def _decision_events(now: float, decision: Decision) -> list[dict[str, Any]]:
    encoder = _DECISION_ENCODERS.get(type(decision))
    if encoder is None:
        raise ProtocolError(f"cannot encode decision {decision!r}")
    return encoder(now, decision)


def encode_reply(now: float, decisions: Sequence[Decision]) -> bytes:
    """The scheduler's reply: every decision takes effect at `now` (a zero-cost scheduler)."""
    events = [event for decision in decisions for event in _decision_events(now, decision)]
    return _dumps({"now": now, "events": events})


def encode_message(now: float, events: Sequence[Mapping[str, Any]]) -> bytes:
    return _dumps({"now": now, "events": list(events)})


def event(timestamp: float, kind: EventType, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"timestamp": timestamp, "type": kind.value, "data": dict(data)}


#: SIMULATION_BEGINS's one key real Batsim does not send: the platform's message time, which our engine
#: tells the decision processes it hosts (`Platform.message_time_s`; other processes ignore it)
MESSAGE_TIME_KEY = "schedlab_message_time_s"


def simulation_begins_data(platform: Platform, workloads: Mapping[str, str],
                           profiles: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """SIMULATION_BEGINS's data as Batsim 4.2.1 sends it (profiles are forwarded there), and the
    platform's message time when known (MESSAGE_TIME_KEY)."""
    n = platform.nb_resources
    known = {} if platform.message_time_s is None else {MESSAGE_TIME_KEY: platform.message_time_s}
    return {**known,
        "nb_resources": n, "nb_compute_resources": n, "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": True,
        "config": {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
                   "redis-prefix": "default", "profiles-forwarded-on-submission": False,
                   "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
                   "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False},
        "compute_resources": [{"id": i, "name": name, "state": "idle", "properties": {},
                               "zone_properties": {}} for i, name in enumerate(platform.resource_names)],
        "storage_resources": [], "workloads": dict(workloads), "profiles": dict(profiles),
    }


def job_submitted_data(job: Job) -> dict[str, Any]:
    return {"job_id": job.id, "job": job_to_json(job)}


# ---------------------------------------------------------------------------------------- recording


class Recorder:
    """Writes every message as a JSON line: {seq, dir, wall, raw} (the shape of the shared captures),
    into a temporary file beside `path`: a complete exchange is renamed to `path`, an interrupted
    one to NAME.incomplete.SUFFIX (`incomplete_path`), so a partial record never replaces a file."""

    def __init__(self, path: str | Path) -> None:
        import tempfile

        from schedlab.paths import give_usual_mode

        self.path = Path(path)
        fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part", dir=self.path.parent)
        give_usual_mode(temporary)
        self._temporary = Path(temporary)
        self._handle: IO[str] = open(fd, "w", encoding="utf-8")  # noqa: SIM115 (closed in close())
        self._seq = 0
        self.written_to: Path | None = None

    @property
    def incomplete_path(self) -> Path:
        return self.path.with_name(f"{self.path.stem}.incomplete{self.path.suffix}")

    def write(self, direction: str, raw: bytes | str) -> None:
        text = raw.decode() if isinstance(raw, bytes) else raw
        self._handle.write(json.dumps({"seq": self._seq, "dir": direction, "wall": time.time(), "raw": text}) + "\n")
        self._handle.flush()
        self._seq += 1

    def close(self, complete: bool = True) -> Path | None:
        """Rename the record into place (`complete`) or beside it (none when no message came);
        returns where it went."""
        import os

        if not self._handle.closed:
            self._handle.close()
            if complete or self._seq:
                self.written_to = self.path if complete else self.incomplete_path
                os.replace(self._temporary, self.written_to)
            else:
                self._temporary.unlink()
        return self.written_to
