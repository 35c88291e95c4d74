"""``ancientbench human``: parse the options, take the output lock, start (or resume) the session and serve it."""

from __future__ import annotations

import argparse
import signal
import sys

from ..errors import AncientBenchError
from ..evaluation.lock import OutputLock
from .server import make_server
from .session import DEFAULT_N_PER_TASK, HumanSession


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--n-per-task", type=int, default=None, help=f"questions sampled per task (default {DEFAULT_N_PER_TASK}; a resumed session keeps its own)")
    parser.add_argument("--output", "--out", dest="out", default="results", help="output folder; the session lives in <out>/Human/ (default: ./results)")
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (default: a random one, stored in the session; a resumed session keeps its own)")
    parser.add_argument("--data", default=None, help="dataset folder or JSONL question file (default: the installed dataset)")


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        print(f"error: --port must be 0-65535, got {args.port}", file=sys.stderr)
        return 2

    lock = OutputLock(args.out)
    try:  # one quiz server per --out: two would both accept the same item and break the session
        lock.acquire()
    except AncientBenchError as e:  # another server holds it, or the disk is full
        lock.release()
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        return _serve(args)
    finally:
        lock.release()


def _serve(args: argparse.Namespace) -> int:
    try:
        session = HumanSession(args.out, args.data, args.n_per_task, args.seed)
    except AncientBenchError as e:  # a bad session or data file, a full disk: one line (also for python -m)
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        server = make_server(session, args.port)
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
    st = session.status()
    host, port = server.server_address[:2]
    verb = "Resuming" if session.resumed else "Starting"
    print(f"{verb} the human baseline: {st['answered']} of {st['planned']} questions answered ({session.n_per_task} per task, seed {session.seed}).", flush=True)
    print(f"Serving http://{host}:{port}/  (answers: {session.answers_file}; Ctrl-C stops, the same command resumes)", flush=True)
    def stop(signum, frame):  # Ctrl-C or a polite kill: leave serve_forever; every answer is on disk already
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)  # also when started in the background, where SIGINT comes ignored
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    st = session.status()
    print(f"\nStopped: {st['answered']} of {st['planned']} answered." + (f" Results: {session.results_file}" if st["answered"] else ""), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``python -m ancientbench.human`` (same options as ``ancientbench human``)."""
    parser = argparse.ArgumentParser(prog="ancientbench human", description="a local quiz page that measures a human baseline, answer by answer")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
