#!/usr/bin/env python3
"""Checks the Prometheus exposition with real consumers.

Runs the exporter over a busy host's ticks (prometheus_fake_run writes its
textfile), parses the file with prometheus_client's parser (the format
node_exporter's textfile collector and Prometheus accept), checks names and
types, then checks that every locus_* metric the Grafana dashboard and the
alert rules query is one the exporter exports.

usage: check_prometheus.py FAKE_RUN DASHBOARD_JSON RULES_YAML
"""
import json
import re
import subprocess
import sys
import tempfile

import yaml

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("python3-prometheus-client is not installed (deploy/deps.sh test)")
    sys.exit(77)

FAKE_RUN, DASHBOARD, RULES = sys.argv[1:4]
failures = []


def exported():
    """{sample name: family type} from a fake run's textfile."""
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/locus.prom"
        subprocess.run([FAKE_RUN, path, "12", "1000", "64"], check=True)
        text = open(path).read()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[sample.name] = family.type
            for label in ("pid", "tid", "comm"):
                if label in sample.labels:
                    failures.append(f"{sample.name} has a per-{label} label")
    return samples


def check_types(samples):
    for name, kind in samples.items():
        if name.endswith("_total") and kind != "counter":
            failures.append(f"{name} is a {kind}, named like a counter")
    if samples.get("locus_tick_duration_seconds_bucket") != "histogram":
        failures.append("locus_tick_duration_seconds is not a histogram")
    for name in ("locus_acting", "locus_build_info", "locus_sensor_up",
                 "locus_node_local_fault_ratio", "locus_journal_entries"):
        if samples.get(name) != "gauge":
            failures.append(f"{name}: {samples.get(name)}, want gauge")


def dashboard_exprs():
    dash = json.load(open(DASHBOARD))
    exprs = [dash["templating"]["list"][1]["definition"]]
    for panel in dash["panels"]:
        exprs += [t["expr"] for t in panel.get("targets", [])]
    return exprs


def rules_exprs():
    rules = yaml.safe_load(open(RULES))
    return [r["expr"] for g in rules["groups"] for r in g["rules"]]


def check_references(samples, where, exprs):
    if not exprs:
        failures.append(f"{where}: no expressions found")
    for expr in exprs:
        for name in set(re.findall(r"\blocus_[a-z0-9_]+", expr)):
            if name not in samples:
                failures.append(f"{where}: {name} is not exported ({expr})")


def main():
    samples = exported()
    if len([n for n in samples if n.startswith("locus_")]) < 20:
        failures.append(f"only {len(samples)} samples exported")
    check_types(samples)
    check_references(samples, DASHBOARD, dashboard_exprs())
    check_references(samples, RULES, rules_exprs())
    for f in failures:
        print("FAIL " + f)
    if failures:
        sys.exit(1)
    print(f"{len(samples)} sample names; dashboard and rules reference only "
          "those")


if __name__ == "__main__":
    main()
