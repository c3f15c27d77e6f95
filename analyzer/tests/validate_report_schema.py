#!/usr/bin/env python3
"""Validates `tbdprof-analyze report --format json` on a generated trace against schemas/report.schema.json.
usage: validate_report_schema.py ANALYZE GENERATOR SCHEMA WORKDIR   (exit 77 without python3-jsonschema)"""
import json, os, subprocess, sys
try:
    import jsonschema
except ImportError:
    print("skipped: python3-jsonschema is not installed")
    sys.exit(77)
analyze, generator, schema_path, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
trace = os.path.join(work, "schema.sqlite")
subprocess.run([generator, trace, "--kernels", "5000", "--kernels-per-iteration", "500"], check=True, stdout=subprocess.DEVNULL)
report = json.loads(subprocess.run([analyze, "report", trace, "--format", "json", "--batch-size", "64"],
                                   check=True, capture_output=True, text=True).stdout)
with open(schema_path) as f:
    jsonschema.validate(report, json.load(f))
assert report["iterations"]["count"] == 9, report["iterations"]
assert report["window"]["used"] == "steady"
print("report validates against", schema_path)
