"""pybatsim entry file: `pybatsim schedlabHybrid.py -s tcp://*:28000 -t 0 -o '{"alpha0": 0.6}'` runs
schedlab's 'hybrid' scheduler (options as `schedlab serve hybrid -O k=v`)."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabHybrid = pybatsim_scheduler("hybrid", "SchedlabHybrid")
