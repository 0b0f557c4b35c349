"""Everything that needs torch: model resolution and loading, embeddings, batching.

Importing this package does not import torch; the functions that need it do. It bounds oneDNN's per-shape caches
(:mod:`groundjudge.local_nli.onednn_caches`) before any model runs.
"""

from groundjudge.local_nli.onednn_caches import bound_shape_caches

bound_shape_caches()
