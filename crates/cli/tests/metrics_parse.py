"""Reads the node's metrics (Prometheus text exposition format) on stdin with the Prometheus
Python client's own parser, and prints what it understood as JSON: each family's name and type,
and each sample's name, labels and value. A text the parser refuses fails the test."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = []
for family in text_string_to_metric_families(sys.stdin.read()):
    families.append(
        {
            "name": family.name,
            "type": family.type,
            "samples": [
                {"name": s.name, "labels": s.labels, "value": s.value}
                for s in family.samples
            ],
        }
    )
json.dump(families, sys.stdout)
