#!/usr/bin/env python3
"""Splits a trace recorded from all ranks on one host into per-"host" traces, each holding the
processes of some ranks, with its clock shifted by a known skew: what `tbdprof merge` gets from a
job whose hosts each recorded their own ranks with their own clock.

Written against the trace format (docs/trace-format.md), not tbdprof's code: a row belongs to a
process through its `process` column, or through the row it points to (a phase through its
iteration, an edge through its kernel, ...); a time is any column named *_ns but durations, queue
delays and cumulative CPU times.

usage: split_hosts.py TRACE OUT.sqlite --ranks 0,1 [--skew-ns NS] [--with-unranked]"""
import argparse
import shutil
import sqlite3
import sys

NOT_TIMES = {"duration_ns", "queued_ns", "user_ns", "system_ns"}
# Tables without a process column, kept when the row they point to is kept.
CHILDREN = [("allocation_categories", "allocation", "allocations"), ("allocation_subranges", "allocation", "allocations"),
            ("phases", "iteration", "iterations"), ("kernel_allocations", "kernel", "kernels"),
            ("kernel_metrics", "kernel", "kernels"), ("stack_frames", "stack", "stacks")]
DEVICE_USERS = ["kernels", "copies", "sets", "allocations", "streams", "memory_heaps", "memory_regions"]


def tables(db):
    return [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]


def columns(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def keep_ranks(db, ranks, with_unranked):
    marks = ",".join("?" * len(ranks))
    kept = [r[0] for r in db.execute(f"SELECT process FROM process_ranks WHERE rank IN ({marks})", ranks)]
    if len(kept) != len(ranks):
        sys.exit(f"the trace has processes for ranks {kept}, not for all of {ranks}")
    if with_unranked:  # the launcher, say: it ran on one host too
        kept += [r[0] for r in db.execute("SELECT id FROM processes WHERE id NOT IN (SELECT process FROM process_ranks)")]
    process_marks = ",".join("?" * len(kept))
    for table in tables(db):
        if table == "processes":
            db.execute(f"DELETE FROM processes WHERE id NOT IN ({process_marks})", kept)
        elif "process" in columns(db, table):
            db.execute(f"DELETE FROM {table} WHERE process NOT IN ({process_marks})", kept)
    for table, column, parent in CHILDREN:
        db.execute(f"DELETE FROM {table} WHERE {column} NOT IN (SELECT id FROM {parent})")
    # This host's devices only: those its rows name.
    used = " UNION ".join(f"SELECT device FROM {t} WHERE device IS NOT NULL" for t in DEVICE_USERS)
    db.execute(f"DELETE FROM devices WHERE id NOT IN ({used})")


def shift_clock(db, skew_ns):
    for table in tables(db):
        if table == "run":
            continue
        for column in columns(db, table):
            if column.endswith("_ns") and column not in NOT_TIMES:
                db.execute(f"UPDATE {table} SET {column} = {column} + ? WHERE {column} IS NOT NULL", (skew_ns,))
    # The same moments, read on a clock `skew_ns` ahead: time 0 is as far from the last event as before.
    db.execute("UPDATE run SET duration_ns = duration_ns + ?, start_monotonic_ns = start_monotonic_ns - ?",
               (skew_ns, skew_ns))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--ranks", required=True)
    parser.add_argument("--skew-ns", type=int, default=0)
    parser.add_argument("--with-unranked", action="store_true", help="keep the processes that have no rank too")
    args = parser.parse_args()
    shutil.copyfile(args.trace, args.out)
    db = sqlite3.connect(args.out)
    keep_ranks(db, [int(r) for r in args.ranks.split(",")], args.with_unranked)
    shift_clock(db, args.skew_ns)
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
