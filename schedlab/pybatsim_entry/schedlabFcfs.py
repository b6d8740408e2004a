"""pybatsim entry file: `pybatsim schedlabFcfs.py -s tcp://*:28000 -t 0` runs schedlab's 'fcfs' scheduler."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabFcfs = pybatsim_scheduler("fcfs", "SchedlabFcfs")
