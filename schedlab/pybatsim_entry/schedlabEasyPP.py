"""pybatsim entry file: `pybatsim schedlabEasyPP.py -s tcp://*:28000 -t 0 -o '{"predictor": "user-last2",
"correction": "tsafrir", "backfill": "sjbf"}'` runs schedlab's 'easy-pp' scheduler (EASY++ here)."""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

SchedlabEasyPP = pybatsim_scheduler("easy-pp", "SchedlabEasyPP")
