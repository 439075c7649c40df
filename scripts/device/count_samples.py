"""Every run under a sweep directory holds each step's samples exactly once.

    python3 count_samples.py SWEEP_DIR PER_STEP [STEPS]

Reads each run.sqlite's samples table: every iteration from the first to the last (STEPS
when given) must hold PER_STEP samples, none missing and none twice. Exits 1 otherwise.
"""
import pathlib
import sqlite3
import sys


def main():
    sweep, per_step = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else None
    dbs = sorted(sweep.rglob("run.sqlite"))
    if not dbs:
        print(f"no run.sqlite under {sweep}")
        return 1
    bad = 0
    for db in dbs:
        rows = sqlite3.connect(db).execute(
            "SELECT iteration, COUNT(*), COUNT(DISTINCT completion) FROM samples GROUP BY iteration ORDER BY iteration").fetchall()
        iterations = [r[0] for r in rows]
        expected = list(range(iterations[0], iterations[0] + (steps or len(iterations)))) if rows else []
        wrong = [r for r in rows if r[1] != per_step]
        ok = rows and iterations == expected and not wrong
        bad += not ok
        print(f"{db.parent.name}: {len(rows)} steps ({iterations[0] if rows else '-'}..{iterations[-1] if rows else '-'}), "
              f"samples a step {sorted(set(r[1] for r in rows))}, distinct completions a step "
              f"{min(r[2] for r in rows) if rows else 0}-{max(r[2] for r in rows) if rows else 0}: {'ok' if ok else 'WRONG'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
