"""pybatsim entry file: `pybatsim schedlabEasySjbf.py -s tcp://*:28000 -t 0` runs schedlab's 'easy-sjbf' scheduler."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabEasySjbf = pybatsim_scheduler("easy-sjbf", "SchedlabEasySjbf")
