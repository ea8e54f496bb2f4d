"""Write the demo's synthetic Mooncake-format trace to a file (for `trace-explorer replay`).

Usage: python -m explorer.demo OUT.jsonl [--requests N] [--seed S]
"""
from __future__ import annotations

import argparse
import sys

from .trace import synthesize_trace, write_mooncake
from .workload import N_REQUESTS, SEED


def main(argv: list[str] | None = None) -> int:
    """Parse argv, write the trace, print what was written; returns the exit code."""
    ap = argparse.ArgumentParser(prog="python -m explorer.demo", description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the JSONL file to write (timestamp, input_length, "
                                "output_length, hash_ids per line)")
    ap.add_argument("--requests", type=int, default=N_REQUESTS, help=f"default {N_REQUESTS}")
    ap.add_argument("--seed", type=int, default=SEED, help=f"default {SEED}")
    args = ap.parse_args(argv)
    if args.requests < 1:
        ap.error("--requests must be at least 1")
    try:
        path = write_mooncake(synthesize_trace(args.requests, args.seed), args.out)
    except OSError as e:
        print(f"{args.out}: cannot be written: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {args.requests} requests (seed {args.seed}, simulated) to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
