#!/usr/bin/env python3
"""Packs the PyTorch configurations a device run recorded (pytorch_configs.sh's OUT/cfg_NAME/ folders,
or pytorch_samples.sh's OUT/torch_SAMPLE/) into one small archive that tests re-tag and score:
tests/realgpu/ holds the one of 2026-12-04.

    pack_real_traces.py ARCHIVE.tar.xz NAME=FOLDER...

Each FOLDER holds run.sqlite and its labels (reconciled.labels, script.labels). The traces are copied,
the paths of the machine they were recorded on are replaced by neutral ones (the bundle's folder by
'bundle', the Python packages' folder by 'site-packages', the run's output folder removed), and the
copies vacuumed; the archive holds NAME/run.sqlite and NAME/*.labels.
"""
import os
import re
import shutil
import sqlite3
import sys
import tarfile
import tempfile

# Machine-specific prefixes -> neutral ones, applied to every text column.
SCRUB = [
    (re.compile(r"/[^ ]*/site-packages/"), "site-packages/"),
    (re.compile(r"/[^ ]*/\.gpu/bundle/"), "bundle/"),
    (re.compile(r"/tmp/[^ ]*/(cfg|torch)_[A-Za-z0-9_]+/"), ""),
]
LABELS = ("reconciled.labels", "script.labels")


def scrub_text(value):
    for pattern, replacement in SCRUB:
        value = pattern.sub(replacement, value)
    return value


def scrub_trace(path):
    db = sqlite3.connect(path)
    db.create_function("scrub", 1, lambda v: scrub_text(v) if isinstance(v, str) else v, deterministic=True)
    tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
    for table in tables:
        for column in [r[1] for r in db.execute(f'pragma table_info("{table}")')]:
            db.execute(f'update "{table}" set "{column}" = scrub("{column}") '
                       f'where typeof("{column}") = \'text\' and "{column}" like \'%/%\'')
    db.commit()
    db.execute("vacuum")
    db.close()


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__.strip().split("\n\n")[1])
    archive = sys.argv[1]
    with tempfile.TemporaryDirectory() as stage:
        for pair in sys.argv[2:]:
            name, folder = pair.split("=", 1)
            os.makedirs(os.path.join(stage, name))
            shutil.copy(os.path.join(folder, "run.sqlite"), os.path.join(stage, name, "run.sqlite"))
            scrub_trace(os.path.join(stage, name, "run.sqlite"))
            for labels in LABELS:
                if os.path.exists(os.path.join(folder, labels)):
                    shutil.copy(os.path.join(folder, labels), os.path.join(stage, name, labels))
        partial = archive + ".partial"
        with tarfile.open(partial, "w:xz", preset=9) as tar:
            for name in sorted(os.listdir(stage)):
                tar.add(os.path.join(stage, name), arcname=name)
        os.replace(partial, archive)


if __name__ == "__main__":
    main()
