"""Thin adapters that hand groundjudge's verdicts to outside tools, one module per tool, each behind its extra.

``otel`` (OpenTelemetry events), ``mlflow`` (an MLflow GenAI scorer), and the others listed in
docs/integrations/. Importing this package or any adapter module imports none of the outside packages: each
adapter imports its tool inside the functions that need it, through :func:`groundjudge.integrations.extras.require`,
so a missing extra is one line naming the ``pip install`` command.
"""
