"""Demonstrations for the LLM judges: labelled examples shown before the answer to judge, framed as data.

- :mod:`.pool`: the pool file (:class:`Demonstration`, :func:`read_pool`, :func:`write_pool`,
  :func:`pool_from_examples`) and the text hash that identifies an answer;
- :mod:`.select`: the strategies (:func:`select_demonstrations`: balanced, nearest, corrections, fixed);
- :mod:`.neighbours`: nearest neighbours by sentence embedding;
- :mod:`.leakage`: no answer judged by a prompt that shows it (:func:`refuse_leakage`);
- :mod:`.shown`: screening for injected text, template variables, header records;
- :mod:`.settings`: the judge settings (``demos=``, ``k=``, ``demo_strategy=``, ...);
- :mod:`.configure`: :func:`with_demonstrations`, a judge config with given demonstrations.

A pool of corrections (answers a judge got wrong, with a person's label and note) is made from a labelled run
by :func:`groundjudge.labels.corrections.corrections_pool`.
"""

from __future__ import annotations

from groundjudge.judges.demonstrations.configure import with_demonstrations
from groundjudge.judges.demonstrations.leakage import DemonstrationLeak, find_leaks, refuse_leakage
from groundjudge.judges.demonstrations.pool import (
    Demonstration,
    PoolError,
    pool_from_examples,
    read_pool,
    text_hash,
    write_pool,
)
from groundjudge.judges.demonstrations.select import STRATEGIES, Strategy, select_demonstrations

__all__ = ["Demonstration", "DemonstrationLeak", "PoolError", "STRATEGIES", "Strategy", "find_leaks",
           "pool_from_examples", "read_pool", "refuse_leakage", "select_demonstrations", "text_hash",
           "with_demonstrations", "write_pool"]

