"""``groundjudge serve``: load the judges once and serve them over HTTP (FastAPI + uvicorn); see docs/serve.md."""

from __future__ import annotations

import argparse
import os
import sys

from groundjudge.cli.common import UsageError, add_llm_options, llm_options
from groundjudge.cli.serve_ray import add_ray_options


def serve_settings(args: argparse.Namespace):
    """The service's limits and token from the flags (the token read from the environment variable named)."""
    from groundjudge.serve.app import ServeSettings

    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            raise UsageError(f"--token-env {args.token_env}: that environment variable is not set or empty")
    return ServeSettings(max_queue=args.max_queue, max_body_bytes=args.max_body_bytes, timeout_s=args.timeout_s,
                         retry_after_s=args.retry_after_s, token=token)


def open_records(folder: str | None, specs, argv: list[str]):
    """The records folder verdicts are appended to (None without ``--record``)."""
    if folder is None:
        return None
    from pathlib import Path

    from groundjudge.runs.live_records import LiveRecords, live_header

    Path(folder).mkdir(parents=True, exist_ok=True)
    templates = {name: t.hash for spec in specs for name, t in spec.templates.items()}
    return LiveRecords(folder, live_header(specs, "served", templates), ["groundjudge", *argv])


def exit_quietly_on_sigterm() -> None:
    """Exit with status 0 when uvicorn, its graceful shutdown done, raises the SIGTERM it caught again."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


def phoenix_annotator(endpoint: str, specs):
    """``--phoenix URL``: the annotator given every verdict answered (a missing extra is a UsageError)."""
    from groundjudge.integrations.extras import MissingExtraError
    from groundjudge.integrations.phoenix import LiveAnnotator

    try:
        return LiveAnnotator(endpoint, specs)
    except MissingExtraError as error:
        raise UsageError(f"--phoenix {endpoint}: {error}") from None


def cmd_serve(args: argparse.Namespace) -> int:
    """Build the judges, then serve until SIGTERM / Ctrl-C (requests in flight are answered first)."""
    try:
        import uvicorn

        from groundjudge.serve.app import create_app
        from groundjudge.runs.micro_batches import BatchSettings
        from groundjudge.serve.loading import load_judges, set_torch_threads
    except ImportError as err:
        raise UsageError(f"serve needs the serve extra (pip install 'groundjudge[serve]'): {err}") from None
    settings = serve_settings(args)
    batching = None if args.no_batching else BatchSettings(max_wait_s=args.batch_wait_ms / 1000,
                                                           max_batch=args.max_batch)
    if args.engine == "ray":
        from groundjudge.cli.serve_ray import cmd_serve_ray

        return cmd_serve_ray(args, settings, batching)
    set_torch_threads(args.torch_threads)
    judges = load_judges(args.judge, llm_options(args), batching)
    records = open_records(args.record, judges.specs, getattr(args, "argv", []))
    exporter = None
    if args.otel:
        from groundjudge.integrations.otel_export import VerdictExporter

        exporter = VerdictExporter(judges.specs)
    annotator = phoenix_annotator(args.phoenix, judges.specs) if getattr(args, "phoenix", None) else None
    callbacks = [c for c in (exporter, annotator) if c is not None]
    app = create_app(judges, settings, records,
                     (lambda *verdict: [c(*verdict) for c in callbacks]) if callbacks else None)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False,
                            timeout_graceful_shutdown=int(settings.timeout_s) + 5, lifespan="on")
    server = uvicorn.Server(config)
    print(f"groundjudge serve: {', '.join(judges.names)} on http://{args.host}:{args.port}", file=sys.stderr,
          flush=True)
    exit_quietly_on_sigterm()
    try:
        server.run()
    finally:
        if exporter is not None:
            exporter.close()
        if annotator is not None:
            annotator.close()
    return 0


def add_parser(verbs) -> None:
    """Add the ``serve`` verb and its options to the command's subparsers."""
    serve = verbs.add_parser("serve", help="serve judges over HTTP (POST /v1/judge, HHEM's API, /metrics)")
    serve.add_argument("--judge", action="append", required=True, metavar="SPEC",
                       help="a judge to serve (repeatable; the first is the default)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--token-env", metavar="VAR", help="require 'Authorization: Bearer <token>', the token "
                                                          "read from this environment variable")
    serve.add_argument("--max-queue", type=int, default=256, metavar="N",
                       help="answers admitted and not yet judged; past it, 503 with Retry-After (default 256)")
    serve.add_argument("--retry-after-s", type=int, default=1, help="the Retry-After of a 503 (default 1)")
    serve.add_argument("--max-body-bytes", type=int, default=1_000_000, help="largest request body (413 past it)")
    serve.add_argument("--timeout-s", type=float, default=60.0, help="longest a request may take (504 past it)")
    serve.add_argument("--record", metavar="DIR", help="append every verdict to this run folder (records.jsonl)")
    serve.add_argument("--otel", action="store_true",
                       help="export every verdict as an OpenTelemetry gen_ai.evaluation.result event over OTLP, "
                            "parented to the request's traceparent (OTEL_EXPORTER_OTLP_*; otel extra)")
    serve.add_argument("--phoenix", metavar="URL",
                       help="annotate the span each request names (its traceparent) with the verdict, in the Arize "
                            "Phoenix at URL (phoenix extra; docs/integrations/phoenix.md)")
    serve.add_argument("--batch-wait-ms", type=float, default=2.0,
                       help="how long a local judge waits to gather concurrent requests into one batch (default 2)")
    serve.add_argument("--max-batch", type=int, default=32, help="most requests in one local batch (default 32)")
    serve.add_argument("--no-batching", action="store_true", help="judge every request on its own")
    serve.add_argument("--torch-threads", type=int, metavar="N",
                       help="intra-op threads of local models (default: torch's, one per core; 1 is often "
                            "faster on cores other processes share)")
    serve.add_argument("--max-cost", type=float, help="stop new LLM calls once this many dollars are spent")
    serve.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local: this process (uvicorn); ray: a Ray Serve application, each judge a deployment "
                            "with its replicas (docs/serve.md)")
    serve.add_argument("--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"))
    add_ray_options(serve)
    add_llm_options(serve)
    serve.set_defaults(func=cmd_serve)
