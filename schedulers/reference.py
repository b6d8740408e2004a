"""What a scheduler's author can rely on, read from the code itself: `schedlab scheduler reference`
prints it, and docs/writing-a-scheduler.md holds the same text (a test keeps the two equal, so the
reference cannot drift from the code)."""

from __future__ import annotations

import dataclasses
import inspect
import typing

from schedlab.model import CallMeLater, Execute, Job, JobState, Kill, Reject, SetMetadata
from schedlab.schedulers.interface import Scheduler

#: When a scheduler sees each state; every JobState must be here (a new one fails the reference)
STATE_MEANING = {
    JobState.NOT_SUBMITTED: "never seen by a scheduler: the job is not submitted yet",
    JobState.SUBMITTED: "never passed to a hook: a submitted job waits for your Execute or Reject",
    JobState.RUNNING: "never passed to a hook: the job runs after your Execute",
    JobState.COMPLETED_SUCCESSFULLY: "`on_job_completed`: it ran its whole run time before its walltime",
    JobState.COMPLETED_FAILED: "`on_job_completed`: it ended before its walltime with a nonzero return code "
                               "(profile `ret`)",
    JobState.COMPLETED_WALLTIME_REACHED: "`on_job_completed`: Batsim killed it at its walltime",
    JobState.COMPLETED_KILLED: "`on_job_completed`, then `on_jobs_killed` with its id: your Kill ended it",
    JobState.REJECTED: "no hook: your Reject decided it (jobs.csv says REJECTED)",
}

HOOKS = ("on_simulation_begins", "on_job_submitted", "on_job_completed", "on_jobs_killed", "on_requested_call",
         "on_no_more_jobs", "on_simulation_ends", "decide", "prepare", "check_inputs", "options")

#: What each Job field holds, beyond its type
JOB_NOTES = {
    "id": "`WORKLOAD!NAME`, unique; `job.name` is NAME (jobs.csv's job_id), `job.workload` WORKLOAD",
    "submit_time_s": "when Batsim submits it (s)",
    "res": "the number of resources it needs, exactly (an Execute gives it that many)",
    "walltime_s": "when Batsim kills it, counted from its start (s); None where the workload says -1 (no limit)",
    "profile": "the name of its Batsim profile (names may say anything: do not parse run times out of them)",
    "extra": "the workload's other job fields (read-only), by source below",
}

EXTENSION_POINTS = ("estimate_s", "planned_duration_s", "revise_estimate", "revise_expected_end", "overrun_end_s",
                    "job_finished")


def _first_paragraph(obj: object) -> str:
    text = inspect.getdoc(obj) or ""
    return " ".join(text.split("\n\n")[0].split())


def _cell(text: str) -> str:
    """Text for a markdown table cell: no quotes of postponed annotations, escaped bars."""
    return text.replace("'", "").replace("|", "\\|")


def _type_name(annotation: object) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    return str(text).replace("typing.", "")


def reference() -> str:
    """The reference, as markdown."""
    from schedlab.schedulers.queue import QueueScheduler
    from schedlab.workloads import slurm, swf, synthetic

    missing = set(JobState) - set(STATE_MEANING)
    if missing:
        raise RuntimeError(f"STATE_MEANING lacks {sorted(s.name for s in missing)}")
    out = ["### Hooks and methods", "", "| method | what it is for |", "|---|---|"]
    for name in HOOKS:
        signature = str(inspect.signature(getattr(Scheduler, name))).replace("self, ", "").replace("(self)", "()")
        out.append(f"| `{_cell(name + signature)}` | {_first_paragraph(getattr(Scheduler, name))} |")
    out += ["", "The base class sets `self.platform` (a `Platform`) and `self.nb_resources` (its number of "
                "resources, ids 0 to nb_resources - 1) in `on_simulation_begins`: call `super()` there.", "",
            "### Job states", "", "| `JobState` | where a scheduler sees it |", "|---|---|"]
    out += [f"| `{state.name}` | {STATE_MEANING[state]} |" for state in JobState]
    out += ["", "### Job", "", "| field | type | what it holds |", "|---|---|---|"]
    hints = typing.get_type_hints(Job)
    for field in dataclasses.fields(Job):
        out.append(f"| `{field.name}` | `{_cell(_type_name(hints[field.name]))}` | {JOB_NOTES[field.name]} |")
    out += ["", "`Job.extra` keys, by where the workload came from (only what is known at submission):", "",
            f"- `schedlab workload from-swf` of an SWF trace: {', '.join(f'`{k}`' for k in swf.FEATURES)} "
            "(a field unknown for every job is left out)",
            f"- of a Slurm table: {', '.join(f'`{k}`' for k in slurm.FEATURES)} (those the table has)",
            f"- `schedlab workload generate`: {', '.join(f'`{k}`' for k in synthetic.features(1, 60.0, 0))}",
            "- any Batsim JSON workload: each job field other than `id`, `subtime`, `res`, `walltime`, `profile`",
            "", "### Decisions", "", "| decision | fields | meaning |", "|---|---|---|"]
    for decision in (Execute, Reject, CallMeLater, Kill, SetMetadata):
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(decision))
        out.append(f"| `{decision.__name__}` | {fields} | {_first_paragraph(decision)} |")
    out += ["", "### Options", "",
            "Options are the keyword-only parameters of `__init__`, each with a default. `-O key=value` "
            "(and campaign files) give text, turned into the annotated type: `bool` (true/false, yes/no, "
            "on/off, 1/0), `int`, `float` (finite), `Literal[...]` (one of its values, checked when the "
            "scheduler is made), `X | None` (`none` gives None), `str`. An option without annotation takes "
            "its default's type (`str | None` for a None default). Class attributes tell more: "
            f"`option_help` ({_first_comment('option_help')}), `option_choices` ({_first_comment('option_choices')}), "
            f"`option_acts_only` ({_first_comment('option_acts_only')}). `options()` returns the options a run "
            "records (by default every keyword option, less those inert with the others).", "",
            "### Extension points of `QueueScheduler` and `EasyBackfilling`", "", "| method | what it is for |",
            "|---|---|"]
    for name in EXTENSION_POINTS:
        signature = str(inspect.signature(getattr(QueueScheduler, name))).replace("self, ", "")
        out.append(f"| `{_cell(name + signature)}` | {_first_paragraph(getattr(QueueScheduler, name))} |")
    return "\n".join(out) + "\n"


def _first_comment(attribute: str) -> str:
    """The `#:` comment above a class attribute of Scheduler, in one line."""
    lines = inspect.getsource(Scheduler).splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{attribute}:"))
    comment: list[str] = []
    for line in reversed(lines[:index]):
        if not line.strip().startswith("#:"):
            break
        comment.insert(0, line.strip()[2:].strip())
    return " ".join(comment).rstrip(".")
