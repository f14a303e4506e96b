#!/usr/bin/env python3
"""The Kubernetes ConfigMap carries the shipped policy byte for byte.

Usage: check_k8s_policy.py CONFIGMAP POLICY
"""
import sys

import yaml


def main(configmap_path, policy_path):
    with open(configmap_path) as f:
        carried = yaml.safe_load(f)["data"]["policy.yaml"]
    with open(policy_path) as f:
        shipped = f.read()
    if carried == shipped:
        return 0
    carried_lines, shipped_lines = carried.splitlines(), shipped.splitlines()
    for number, (a, b) in enumerate(zip(carried_lines, shipped_lines), 1):
        if a != b:
            print(f"{configmap_path}: line {number} of policy.yaml is '{a}', "
                  f"{policy_path} has '{b}'", file=sys.stderr)
            return 1
    print(f"{configmap_path}: policy.yaml has {len(carried_lines)} lines, "
          f"{policy_path} {len(shipped_lines)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
