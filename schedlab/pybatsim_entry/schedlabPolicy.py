"""pybatsim entry file: `pybatsim schedlabPolicy.py -s tcp://*:28000 -t 0 -o '{"policy": "learned.json"}'`
(or `{"policy": "mine.py:choose", "backfill": true}`) runs a trained policy: schedlab's 'policy' scheduler."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabPolicy = pybatsim_scheduler("policy", "SchedlabPolicy")
