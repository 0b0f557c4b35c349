"""``groundjudge serve --engine ray``: the same service as a Ray Serve application (see docs/serve.md, "Beyond one
machine"): its options, and the command that deploys it and waits for SIGTERM / Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from groundjudge.cli.common import UsageError

RAY_SERVE_MISSING = ("serve --engine ray needs Ray Serve: pip install 'groundjudge[ray-serve]' (ray[serve], same "
                     "version on every node)")


def add_ray_options(serve: argparse.ArgumentParser) -> None:
    """The options of ``serve --engine ray``."""
    serve.add_argument("--address", metavar="ADDR",
                       help="with --engine ray: the Ray cluster to join (default RAY_ADDRESS, else a local Ray)")
    serve.add_argument("--replicas", action="append", default=[], metavar="N|JUDGE=N",
                       help="with --engine ray: replicas of every judge (N) or of one judge, by spec or kind "
                            "(JUDGE=N); repeatable (default 1)")
    serve.add_argument("--ray-num-cpus", type=float, default=1.0, metavar="CPUS",
                       help="with --engine ray: CPUs each replica of a local judge reserves (default 1; LLM "
                            "judges' replicas reserve none)")


def stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or SIGINT (installed before Ray starts, so a signal while it deploys is kept too)."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.set())
    return stop


def cmd_serve_ray(args: argparse.Namespace, settings, batching) -> int:
    """Deploy the judges on Ray Serve, serve until SIGTERM / Ctrl-C, then take the application down (requests in
    flight answered, the records folder closed)."""
    try:
        import ray.serve  # noqa: F401
    except ImportError as err:
        raise UsageError(f"{RAY_SERVE_MISSING} ({err})") from None
    from groundjudge.cli.common import llm_options
    from groundjudge.runs.live_records import live_header
    from groundjudge.serve.loading import load_judges
    from groundjudge.serve.ray_app import RayServeOptions, RayService, parse_replicas

    for flag in ("otel", "phoenix"):
        if getattr(args, flag, None):
            raise UsageError(f"--{flag} is not available with --engine ray yet: serve with --engine local")
    try:
        replicas, by_judge = parse_replicas(args.replicas)
    except ValueError as err:
        raise UsageError(str(err)) from None
    llm = llm_options(args)
    judges = load_judges(args.judge, llm, batching)   # specs and settings only: models load in the replicas
    records = None
    if args.record is not None:
        templates = {name: t.hash for spec in judges.specs for name, t in spec.templates.items()}
        from pathlib import Path

        folder = Path(args.record).resolve()   # the writer actor's working directory is not this one
        folder.mkdir(parents=True, exist_ok=True)
        records = (str(folder), live_header(judges.specs, "served", templates),
                   ["groundjudge", *getattr(args, "argv", [])])
    options = RayServeOptions(address=args.address, replicas=replicas, judge_replicas=by_judge,
                              num_cpus=args.ray_num_cpus, host=args.host, port=args.port)
    try:
        service = RayService(judges, settings, options, llm, records)
    except ValueError as err:
        raise UsageError(str(err)) from None
    stop = stop_on_signals()
    service.start(batching)
    try:
        print(f"groundjudge serve (ray): {', '.join(judges.names)} on http://{args.host}:{args.port}",
              file=sys.stderr, flush=True)
        while not stop.wait(3600):
            pass
    finally:
        service.stop()
    return 0
