#!/usr/bin/env python3
"""gen-seccomp.py — the seccomp profile for containers that run ward: the
engine's default profile plus exactly what ward needs, nothing more.

    packaging/container/gen-seccomp.py [ENGINE_PROFILE] > seccomp.json
    packaging/container/gen-seccomp.py --clone3-enosys [ENGINE_PROFILE]   (tests only)

ENGINE_PROFILE defaults to podman's, /usr/share/containers/seccomp.json.

The delta, all of it:
  sethostname  allowed whatever the container's capabilities. The default
               allows it only to a container holding CAP_SYS_ADMIN (its
               rule "includes caps"), and answers EPERM otherwise; ward sets
               the hostname of the UTS namespace it made itself, which
               changes nothing of the container's.
Everything else ward does (unshare, clone and clone3 with CLONE_NEW*,
mount, pivot_root, the new mount API, openat2, setns) the default already
allows. What the default profile cannot change is /proc: unmask it
(docs/containers.md).

--clone3-enosys answers clone3 with ENOSYS, as Docker's default profile
does (tests/container/run.sh: ward falls back to clone).
"""
import json
import sys

DELTA_NAME = "sethostname"


def main(argv):
    clone3_enosys = "--clone3-enosys" in argv
    args = [a for a in argv[1:] if a != "--clone3-enosys"]
    src = args[0] if args else "/usr/share/containers/seccomp.json"
    with open(src) as f:
        prof = json.load(f)
    rules = []
    for rule in prof["syscalls"]:
        names = rule.get("names", [])
        # the refusals and the capability-gated allow of sethostname go:
        # one plain allow replaces them
        if DELTA_NAME in names and (rule.get("includes", {}).get("caps") or
                                    rule.get("excludes", {}).get("caps")):
            rest = [n for n in names if n != DELTA_NAME]
            if not rest:
                continue
            rule = dict(rule, names=rest)
        if clone3_enosys and "clone3" in rule.get("names", []):
            rest = [n for n in rule["names"] if n != "clone3"]
            if not rest:
                continue
            rule = dict(rule, names=rest)
        rules.append(rule)
    rules.append({
        "names": [DELTA_NAME],
        "action": "SCMP_ACT_ALLOW",
        "comment": "ward: the hostname of the UTS namespace ward made itself",
    })
    if clone3_enosys:
        rules.append({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38,
                      "comment": "Docker's default: clone3 is ENOSYS, libc falls back to clone"})
    prof["syscalls"] = rules
    json.dump(prof, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
