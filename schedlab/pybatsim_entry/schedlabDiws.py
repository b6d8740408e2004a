"""pybatsim entry file: `pybatsim schedlabDiws.py -s tcp://*:28000 -t 0 -o '{"history": "H.json"}'`
(or `{"model": "M.skops"}`) runs schedlab's 'diws' scheduler."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabDiws = pybatsim_scheduler("diws", "SchedlabDiws")
