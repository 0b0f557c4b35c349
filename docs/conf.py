"""Sphinx configuration of the groundjudge documentation: MyST Markdown pages, the Furo theme, and reference pages
generated from the code at build time (``_ext/gj_reference.py``, autodoc). Build it strictly with
``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (``tests/test_docs_build.py`` does)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

project = "groundjudge"
author = "the groundjudge authors"
copyright = "2026, the groundjudge authors"   # noqa: A001 - Sphinx's name
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "gj_reference",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist", "attrs_inline"]
myst_heading_anchors = 4

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"exclude-members": "model_config, model_fields, model_computed_fields"}
autodoc_mock_imports: list[str] = []
nitpicky = False

html_theme = "furo"
html_title = "groundjudge"
html_static_path: list[str] = []
html_show_sourcelink = False
html_copy_source = False
# search: Sphinx's own client-side index (searchindex.js), which works offline and from file://
html_search_language = "en"

suppress_warnings = ["myst.header", "misc.highlighting_failure"]   # a JSON example with "..." elided is fine
smartquotes = False   # "--dev-fraction" stays two hyphens
