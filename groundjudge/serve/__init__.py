"""``groundjudge serve``: the judges as an HTTP service (FastAPI + uvicorn), JSON in and JSON out.

One module per job: :mod:`~groundjudge.serve.schemas` (request and response models),
:mod:`~groundjudge.serve.loading` (judges built once), the micro-batcher of
:mod:`~groundjudge.runs.micro_batches` (local judges batched across concurrent requests on a run's chunk path),
:mod:`~groundjudge.serve.limits` (token, body cap, bounded queue), :mod:`~groundjudge.serve.metrics`
(Prometheus text), :mod:`~groundjudge.serve.judging` (a request to a verdict, recorded),
:mod:`~groundjudge.serve.app` (the app factory) and :mod:`~groundjudge.serve.process` (the service in a child
process, for tests and benchmarks). ``--engine ray`` runs the same app on Ray Serve:
:mod:`~groundjudge.serve.ray_replicas` (the ingress and the judge replicas) and :mod:`~groundjudge.serve.ray_app`
(deploying them, with shared LLM limits and one records writer). Only the CLI imports this package; fastapi, uvicorn and prometheus_client
come with the ``serve`` extra.
"""
