"""``python -m groundjudge.testing --port 8765``: the scripted OpenAI/Anthropic server with the oracle responder,
in the foreground, for trying LLM judges with no provider and no key (every reply costs $0; Ctrl-C stops it)."""

from __future__ import annotations

import argparse
import signal
import threading


def main(argv: list[str] | None = None) -> int:
    """Serve the oracle on 127.0.0.1 until interrupted."""
    from groundjudge.testing.oracle import oracle_responder
    from groundjudge.testing.scripted_server import ScriptedLLMServer

    parser = argparse.ArgumentParser(prog="python -m groundjudge.testing", description=__doc__)
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: a free one)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with ScriptedLLMServer(oracle_responder, port=args.port) as server:
        print(f"scripted LLM server: OpenAI base {server.openai_base}, Anthropic base {server.anthropic_base}",
              flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
