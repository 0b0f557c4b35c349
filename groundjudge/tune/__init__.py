"""``groundjudge tune``: search a judge's levers (calibration, demonstrations, instructions, the claims judge's
aggregation) by successive halving on held-apart data, within a budget of calls, and report the winner against
the starting judge on a test part judged once.

- :mod:`.spec`: the ``[tune]`` table of an experiment file; :mod:`.prepare`: everything checked before a call;
- :mod:`.parts`: the group split (optimise, select, test); :mod:`.candidates`: the levers' combinations;
- :mod:`.calibration`: fitted, contextual and batch calibration; :mod:`.proposer`: instructions from mistakes;
- :mod:`.search`: successive halving; :mod:`.budget`, :mod:`.state`, :mod:`.estimate`, :mod:`.plan`: calls
  counted, never exceeded, never repeated; :mod:`.heldout`: the test part; :mod:`.winner`, :mod:`.result`: output.
"""

from __future__ import annotations

__all__ = ["TuneOptions", "run_tune"]


def __getattr__(name: str):
    if name in __all__:
        from groundjudge.tune import prepare, run

        return {"TuneOptions": prepare.TuneOptions, "run_tune": run.run_tune}[name]
    raise AttributeError(name)
