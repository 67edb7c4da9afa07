#!/usr/bin/env python3
"""bench/serve-hostile.py — the memory of `ward serve` under a hostile client.

Starts `ward serve` (B=build by default) in a scratch directory, reads its
VmRSS and VmHWM (peak) from /proc, then sends what issue 21 found costly:
an alias bomb (a0 = a1;a1;a1;a1, twelve levels), 80 commands of 1 MB, 1 MB
aliases and variables, history searches, 1,000 session creations, lines over
the 1 MiB cap, unanswered concurrent requests, and prints the figures before
and after as one JSON object. Usage: bench/serve-hostile.py [WARD]
"""
import json
import os
import subprocess
import sys
import tempfile
import threading


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0])  # kB
    return out


def main():
    ward = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("B", "build"), "ward")
    ward = os.path.abspath(ward)
    work = tempfile.mkdtemp(prefix="ward-hostile.")
    os.chmod(work, 0o755)
    pol = os.path.join(work, "..", os.path.basename(work) + ".json")
    with open(pol, "w") as f:
        json.dump({"rate_limit": {"per_minute": 0, "per_hour": 0}}, f)
    p = subprocess.Popen([ward, "serve", "--policy=" + pol], cwd=work, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)
    answers = []

    def drain():  # a client that reads (the unread case is in tests/escape)
        for line in os.fdopen(p.stdout.fileno(), "rb", buffering=1 << 20, closefd=False):
            answers.append(len(line))

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    n = [0]

    def send(method, **params):
        n[0] += 1
        msg = {"jsonrpc": "2.0", "id": n[0], "method": method}
        if params:
            msg["params"] = params
        p.stdin.write((json.dumps(msg) + "\n").encode())

    def settle():  # wait until every request so far is answered
        send("ping")
        want = n[0]
        while True:
            if len(answers) >= want:
                return
            threading.Event().wait(0.05)

    send("session.exec", command="true")
    settle()
    before = status(p.pid)

    import time
    t0 = time.time()

    def phase(name):
        if os.environ.get("VERBOSE"):
            settle()
            print(name, round(time.time() - t0, 1), status(p.pid), file=sys.stderr)

    for i in range(12):
        send("session.alias.set", name=f"a{i}", value=";".join([f"a{i + 1}"] * 4))
    send("session.alias.set", name="a12", value="echo boom")
    send("session.exec", command="a0")
    phase("alias bomb")
    big = "sudo " + "x" * 1000000
    for _ in range(80):
        send("session.exec", command=big)
    phase("80 commands of 1 MB")
    for i in range(50):
        send("session.alias.set", name=f"big{i}", value="y" * 1000000)
        send("session.env.set", name=f"BIG{i}", value="z" * 1000000)
    phase("aliases and variables of 1 MB")
    for _ in range(20):
        send("session.history.search", contains="x")
    phase("history searches")
    for _ in range(1000):
        send("session.create", isolation="shared")
    phase("1000 session creations")
    for _ in range(20):
        p.stdin.write(b"[" * (2 << 20) + b"\n")
    phase("lines over the cap")
    for _ in range(100):
        send("session.exec", command="echo hi", concurrent=True)
    phase("100 concurrent commands")
    settle()
    after = status(p.pid)
    p.stdin.close()
    p.wait()
    os.unlink(pol)
    subprocess.run(["rm", "-rf", work])
    print(json.dumps({"rss_kb_before": before["VmRSS"], "rss_kb_after": after["VmRSS"],
                      "peak_kb": after["VmHWM"], "requests": n[0],
                      "mb_sent": 80 + 50 + 50 + 40,
                      "largest_answer_bytes": max(answers), "exit": p.returncode}))


if __name__ == "__main__":
    main()
