"""What the communication tests share: a check that prints its outcome and remembers failures, a
subprocess runner, and the exit that says how many checks failed. Imported from the test's own folder
(Python puts a script's folder first on its path)."""
import subprocess
import sys

FAILURES = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        FAILURES.append(message)


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def exit_if_failed():
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
