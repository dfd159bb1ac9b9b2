"""Sample order logs for the data-extraction example: several files, noise, and duplicates.

    python -m examples.data_extraction.generate_logs logs/ --files 3 --orders 40 --seed 7

Each order is logged once at `INFO`; some are logged again as a `WARN ... retry=1` line (in the
same file or the next one, as after a log rotation), and heartbeat / cache lines are noise. The
same arguments always write the same files.
"""

from __future__ import annotations

import argparse
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

CUSTOMERS = ("alice", "bob", "chen", "dana", "emeka", "farah", "goro", "hana")
CURRENCIES = ("EUR", "USD", "CNY")


def order_line(when: datetime, order: int, rng: random.Random, retry: bool = False) -> str:
    """One checkout line (deterministic for a given `rng` state)."""
    level = "WARN " if retry else "INFO "
    customer = CUSTOMERS[order % len(CUSTOMERS)]
    amount = 5 + (order * 37 % 500) + (order % 100) / 100
    currency = CURRENCIES[order % len(CURRENCIES)]
    tail = " retry=1" if retry else ""
    return (
        f"{when:%Y-%m-%dT%H:%M:%SZ} {level}checkout order=ORD-{order:05d} customer={customer} "
        f"amount={amount:.2f} currency={currency} node=web-{rng.randint(1, 4)}{tail}"
    )


def noise_line(when: datetime, rng: random.Random) -> str:
    """A line that is not an order."""
    if rng.random() < 0.5:
        return f"{when:%Y-%m-%dT%H:%M:%SZ} DEBUG heartbeat worker={rng.randint(1, 8)} ok"
    return f"{when:%Y-%m-%dT%H:%M:%SZ} INFO  cache hit ratio={rng.random():.2f}"


def generate(folder: str | Path, *, files: int = 3, orders: int = 40, seed: int = 7) -> list[Path]:
    """Write `files` log files holding `orders` distinct orders; the paths written."""
    rng = random.Random(seed)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    when = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    lines: list[list[str]] = [[] for _ in range(files)]
    for order in range(1, orders + 1):
        index = (order - 1) * files // orders
        when += timedelta(seconds=rng.randint(5, 90))
        lines[index].append(order_line(when, 10000 + order, rng))
        if rng.random() < 0.3:  # a retry logged again, maybe after the file rotated
            again = min(index + rng.randint(0, 1), files - 1)
            lines[again].append(
                order_line(when + timedelta(seconds=2), 10000 + order, rng, retry=True)
            )
        if rng.random() < 0.6:
            lines[index].append(noise_line(when + timedelta(seconds=1), rng))
    paths = []
    for i, content in enumerate(lines):
        path = out / f"shop-{i + 1:02d}.log"
        path.write_text("\n".join(content) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Write the sample logs."""
    parser = argparse.ArgumentParser(description="Write sample order logs.")
    parser.add_argument("folder", nargs="?", default="logs")
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--orders", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    for path in generate(args.folder, files=args.files, orders=args.orders, seed=args.seed):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
