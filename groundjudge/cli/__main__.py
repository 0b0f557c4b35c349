"""``python -m groundjudge.cli``: the ``groundjudge`` command."""

import sys

from groundjudge.cli import main

sys.exit(main())
