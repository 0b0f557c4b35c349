"""litellm, imported when a call needs it (never at import time: a process that judges only with local judges,
or a pytest session with the plugin, never loads it), with its price table read from the package, not the network."""

from __future__ import annotations

import os
from types import ModuleType


def litellm_module() -> ModuleType:
    """The ``litellm`` module, importing it on first use with ``LITELLM_LOCAL_MODEL_COST_MAP`` defaulted to True."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
