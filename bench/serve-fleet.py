#!/usr/bin/env python3
"""bench/serve-fleet.py — N concurrent `ward serve` sessions in one container,
with per-command latency percentiles (issue 19: many agent hosts, one ward
per agent).

    bench/serve-fleet.py [--sessions N] [--commands K] [--command CMD] [WARD]

Starts one podman container (runc, a containers.conf of its own through
CONTAINERS_CONF, /proc unmasked, the engine's default seccomp profile) on
the rootfs tests/container/rootfs.sh caches, ward bound in read-only. Then N
clients at once each run `podman exec -i CONTAINER ward serve` in a workdir
of its own, initialize, and send K tools/call "shell" requests one after
the other; each request's time from sending to its answer is one sample.
Prints one JSON object: the settings, how many commands failed, and the
latency percentiles (ms) over every sample. The container is removed at
the end. Needs root, podman and mmdebstrap (scripts/deps.sh container).
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def percentile(sorted_v, p):
    if not sorted_v:
        return None
    k = (len(sorted_v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_v) - 1)
    return round(sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (k - lo), 2)


def client(cid, i, k, command, barrier, samples, errors, lock):
    p = subprocess.Popen(["podman", "exec", "-i", "-w", f"/work/s{i}", cid, "/usr/local/bin/ward",
                          "serve", "--policy=/work/policy.json"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def call(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        line = p.stdout.readline()
        return json.loads(line) if line else None

    mine, bad = [], 0
    try:
        r = call({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "serve-fleet", "version": "1"}}})
        if not r or "result" not in r:
            bad += k
            return
        barrier.wait()
        for n in range(k):
            t0 = time.monotonic()
            r = call({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                      "params": {"name": "shell", "arguments": {"command": command}}})
            dt = (time.monotonic() - t0) * 1000.0
            sc = (r or {}).get("result", {}).get("structuredContent", {})
            if sc.get("exit_code") == 0 and sc.get("sandboxed"):
                mine.append(dt)
            else:
                bad += 1
    except threading.BrokenBarrierError:
        bad += k
    finally:
        p.stdin.close()
        p.wait()
        with lock:
            samples.extend(mine)
            errors[0] += bad


def main(argv):
    n, k, command, ward = 20, 20, "true", None
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a == "--sessions":
            n = int(args.pop(0))
        elif a == "--commands":
            k = int(args.pop(0))
        elif a == "--command":
            command = args.pop(0)
        else:
            ward = a
    ward = os.path.abspath(ward or os.path.join(os.environ.get("B", "build"), "ward"))
    # the rootfs tests/container/run.sh runs on (built when not cached)
    rootfs = os.environ.get("WARD_CONTAINER_ROOTFS") or subprocess.run(
        [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "container",
                      "rootfs.sh")], capture_output=True, text=True).stdout.strip()
    if not rootfs or not os.path.exists(os.path.join(rootfs, "bin/sh")):
        print("serve-fleet: no rootfs (tests/container/rootfs.sh builds it)", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="ward-fleet.")
    conf = os.path.join(tmp, "containers.conf")
    with open(conf, "w") as f:
        f.write('[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=8192:8192"]\n'
                '[engine]\nruntime = "runc"\n')
    os.environ["CONTAINERS_CONF"] = conf
    cid = subprocess.run(["podman", "run", "-d", "--rm", "--security-opt", "unmask=/proc/*",
                          "-v", f"{ward}:/usr/local/bin/ward:ro", "--tmpfs", "/work:mode=0755",
                          "--rootfs", rootfs + ":O", "sleep", "infinity"],
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        subprocess.run(["podman", "exec", cid, "sh", "-c",
                        f"for i in $(seq 0 {n - 1}); do mkdir -p /work/s$i; done; "
                        "echo '{\"rate_limit\": {\"per_minute\": 0, \"per_hour\": 0}}' "
                        "> /work/policy.json"], check=True)
        barrier = threading.Barrier(n)
        samples, errors, lock = [], [0], threading.Lock()
        threads = [threading.Thread(target=client,
                                    args=(cid, i, k, command, barrier, samples, errors, lock))
                   for i in range(n)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", cid], capture_output=True)
        subprocess.run(["rm", "-rf", tmp])
    samples.sort()
    print(json.dumps({
        "sessions": n, "commands_per_session": k, "command": command,
        "commands_ok": len(samples), "commands_failed": errors[0],
        "wall_s": round(wall, 2),
        "latency_ms": {"p50": percentile(samples, 50), "p90": percentile(samples, 90),
                       "p99": percentile(samples, 99),
                       "max": round(samples[-1], 2) if samples else None},
        "cpus": os.cpu_count(),
    }, indent=1))
    return 0 if errors[0] == 0 and samples else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
