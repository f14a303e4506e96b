#!/usr/bin/python3
"""Checks deploy/kubernetes/daemonset.yaml for what running locusd needs.

usage: check_daemonset.py DAEMONSET.yaml LOCUSD.service

Every problem is printed; the exit status is 1 when there is any. The
container's capabilities must equal the systemd unit's bounding set, so the two
deployments cannot drift apart.
"""
import posixpath
import sys

import yaml

problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
    return cond


def flag(command, name):
    """Value of --name=VALUE in a command list, or None."""
    prefix = "--" + name + "="
    for arg in command:
        if arg.startswith(prefix):
            return arg[len(prefix):]
    return None


def unit_exec_start(unit_path):
    with open(unit_path) as f:
        for line in f:
            if line.startswith("ExecStart="):
                return line.split("=", 1)[1].split()[0]
    return None


def unit_capabilities(unit_path):
    caps = set()
    with open(unit_path) as f:
        for line in f:
            if line.startswith("CapabilityBoundingSet="):
                caps |= {c.removeprefix("CAP_")
                         for c in line.split("=", 1)[1].split()}
    return caps


def main(manifest_path, unit_path):
    with open(manifest_path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    kinds = {d["kind"]: d for d in docs}
    if not check("DaemonSet" in kinds, "no DaemonSet"):
        return
    ds = kinds["DaemonSet"]
    pod = ds["spec"]["template"]["spec"]
    check(ds["spec"]["selector"]["matchLabels"].items()
          <= ds["spec"]["template"]["metadata"]["labels"].items(),
          "selector does not match the pod template's labels")
    if "Namespace" in kinds:
        check(ds["metadata"]["namespace"] == kinds["Namespace"]["metadata"]["name"],
              "DaemonSet is not in the Namespace the file creates")
    check(pod.get("hostPID") is True, "hostPID is not true")

    containers = {c["name"]: c for c in pod["containers"]}
    if not check("locusd" in containers, "no container named locusd"):
        return
    main_c = containers["locusd"]
    cmd = main_c["command"] + main_c.get("args", [])
    # The image installs the .deb, so locusd is where the unit runs it from.
    check(cmd[0] == unit_exec_start(unit_path),
          f"container runs {cmd[0]}, the package installs {unit_exec_start(unit_path)}")

    volumes = {v["name"]: v for v in pod["volumes"]}

    def mount_for(container, path):
        """The volume mount whose mountPath is `path`, or None."""
        for m in container.get("volumeMounts", []):
            if posixpath.normpath(m["mountPath"]) == posixpath.normpath(path):
                return m
        return None

    def host_path_at(container, mount_path, host_path):
        m = mount_for(container, mount_path)
        if not check(m is not None, f"{container['name']}: nothing mounted at {mount_path}"):
            return None
        v = volumes.get(m["name"], {})
        check(v.get("hostPath", {}).get("path") == host_path,
              f"{container['name']}: {mount_path} is not the host's {host_path}")
        return m

    for c in [main_c] + pod.get("initContainers", []):
        sc = c.get("securityContext", {})
        name = c["name"]
        check(not sc.get("privileged", False), f"{name}: privileged")
        check(sc.get("allowPrivilegeEscalation") is False,
              f"{name}: allowPrivilegeEscalation is not false")
        caps = sc.get("capabilities", {})
        check("ALL" in caps.get("drop", []), f"{name}: capabilities not dropped")
        added = set(caps.get("add", []))
        want = unit_capabilities(unit_path)
        check(want and added == want,
              f"{name}: capabilities {sorted(added)} differ from the systemd "
              f"unit's bounding set {sorted(want)}")
        check(c.get("resources", {}).get("limits", {}).get("memory"),
              f"{name}: no memory limit")
        host_path_at(c, "/sys/fs/bpf", "/sys/fs/bpf")
        host_path_at(c, "/sys/kernel/tracing", "/sys/kernel/tracing")
        ccmd = c["command"] + c.get("args", [])
        # The container's own /proc/irq and /sys are read-only: the host's
        # trees must be mounted and locusd pointed at them.
        for tree in ("proc", "sys"):
            root = flag(ccmd, f"{tree}fs_root")
            if check(root, f"{name}: no --{tree}fs_root"):
                m = host_path_at(c, root, "/" + tree)
                if tree == "proc" and m:
                    check(not m.get("readOnly", False),
                          f"{name}: host /proc is read-only (IRQ affinity is written there)")
        journal = flag(ccmd, "journal")
        if check(journal, f"{name}: no --journal"):
            m = host_path_at(c, posixpath.dirname(journal), "/var/lib/locus")
            check(m and not m.get("readOnly", False), f"{name}: journal directory read-only")

    # The restore step before the agent, as the unit's ExecStartPre.
    inits = pod.get("initContainers", [])
    check(any("--restore" in c["command"] for c in inits),
          "no init container runs locusd --restore")
    check(all(flag(c["command"], "journal") == flag(cmd, "journal") for c in inits),
          "init container restores a different journal")

    # Policy: a ConfigMap mounted as a directory (a subPath mount is never
    # updated, so hot reload would silently stop working).
    policy = flag(cmd, "policy")
    if check(policy, "no --policy"):
        m = mount_for(main_c, posixpath.dirname(policy))
        if check(m is not None, "nothing mounted at the policy's directory"):
            check("subPath" not in m, "policy mounted with subPath: no hot reload")
            cm = volumes.get(m["name"], {}).get("configMap")
            if check(cm is not None, "policy directory is not a ConfigMap"):
                keys = [i["path"] for i in cm.get("items", [])]
                check(not keys or posixpath.basename(policy) in keys,
                      "ConfigMap does not provide the policy file's name")

    # The socket on a hostPath, so locusctl on the node reaches the pod.
    socket = flag(cmd, "socket") or "/run/locus/locusd.sock"
    host_path_at(main_c, posixpath.dirname(socket), "/run/locus")

    probe = main_c.get("livenessProbe", {}).get("exec", {}).get("command", [])
    if check(probe, "no exec liveness probe"):
        check(posixpath.basename(probe[0]) == "locusctl" and "status" in probe,
              "liveness probe is not `locusctl status`")
        check((flag(probe, "socket") or "/run/locus/locusd.sock") == socket,
              "liveness probe asks another socket than locusd serves")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
    for p in problems:
        print(f"{sys.argv[1]}: {p}")
    if problems:
        sys.exit(1)
    print(f"{sys.argv[1]}: ok")
