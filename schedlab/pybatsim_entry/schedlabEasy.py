"""pybatsim entry file: `pybatsim schedlabEasy.py -s tcp://*:28000 -t 0` runs schedlab's 'easy' scheduler."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabEasy = pybatsim_scheduler("easy", "SchedlabEasy")
