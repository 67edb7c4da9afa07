#!/bin/sh
# tests/container/run.sh — ward inside podman containers (make test-container,
# and the container tier of tests/run.sh, which CI requires).
#
# A Debian rootfs made with mmdebstrap (tests/container/rootfs.sh builds it
# when it is not cached, under ${WARD_CONTAINER_CACHE:-~/.cache/ward-container}),
# podman with runc and a containers.conf of the test's own (CONTAINERS_CONF:
# the machine's own configuration is never touched), ward bound in read-only.
# Checks:
#   1. a default container (masked /proc): ward run fails naming /proc, and
#      ward doctor says it is in podman and names --security-opt unmask=/proc/*
#   2. only /proc unmasked, the default seccomp profile: sandboxed, the
#      hostname skipped (the profile refuses sethostname)
#   3. a Docker-style profile (clone3 -> ENOSYS): sandboxed (clone fallback)
#   4. packaging/container/seccomp.json: sandboxed, the hostname set
#   5. ward inside ward in the container with --allow-nested (as a user of
#      the container; its root, the host's, is refused the flag), and without
#      it the inner ward's refusal names --allow-nested
#   6. podman build of packaging/container/Containerfile from the local base,
#      and podman kube play of packaging/container/ward-pod.yaml running a
#      command through ward, hostUsers: false (--userns=auto, with
#      /etc/subuid and /etc/subgid of the test's own in a private mount
#      namespace) and the Pod's uid map checked; the same Pod without
#      procMount: Unmasked stops at /proc. This podman (4.3) does not honour
#      procMount: Unmasked (4.7 does): a runtime wrapper of the test does
#      what the field means, where the manifest has it
#   7. 20 concurrent ward serve sessions in one container, with per-command
#      latency percentiles (bench/serve-fleet.py)
# Everything it makes (containers, pods, images) is removed at the end.
# About 50 s with the rootfs cached, a minute more to build it; without
# podman, runc or mmdebstrap, or not as root, it says "# SKIP container"
# (tests/run.sh fails on that when WARD_TEST_REQUIRE asks for container).
set -eu
B=${B:-build}
WARD=$(cd "$B" && pwd)/ward
WARD_TLS=$(cd "$B" && pwd)/ward-tls
SRC=$(cd "$(dirname "$0")/../.." && pwd)
for t in podman runc mmdebstrap python3; do
	if ! command -v $t >/dev/null; then
		echo "# SKIP container: $t missing (scripts/deps.sh container)"
		exit 0
	fi
done
[ "$(id -u)" = 0 ] || { echo "# SKIP container: needs root (rootful podman)"; exit 0; }

ROOTFS=$("$SRC/tests/container/rootfs.sh") || {
	echo "not ok - the Debian rootfs (tests/container/rootfs.sh)"
	exit 1
}
export WARD_CONTAINER_ROOTFS="$ROOTFS"

TMP=$(mktemp -d /tmp/ward-container.XXXXXX)
TAG=w$$
cat > "$TMP/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$TMP/containers.conf"
# kube play builds podman's pause image on first use: removed again if it
# was not there before
had_pause=$(podman images -q --filter reference=localhost/podman-pause 2>/dev/null || true)
cleanup() {
	if [ -z "$had_pause" ]; then
		podman images -q --filter reference=localhost/podman-pause 2>/dev/null |
			xargs -r podman rmi -f >/dev/null 2>&1 || true
	fi
	podman pod rm -f "ward-agent-$TAG" "ward-agent-m$TAG" >/dev/null 2>&1 || true
	podman rm -f --filter "label=ward-test=$TAG" >/dev/null 2>&1 || true
	podman rmi -f "localhost/ward-base-$TAG:bookworm" "localhost/ward-$TAG:test" \
		>/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

fails=0
pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; shift; printf '  %s\n' "$@"; fails=$((fails + 1)); }

# run IN-CONTAINER-OPTIONS -- WARD-ARGS: ward in the cached rootfs
crun_ward() {
	opts=""
	while [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	# shellcheck disable=SC2086
	podman run --rm --label "ward-test=$TAG" $opts -v "$WARD:/usr/local/bin/ward:ro" \
		-v "$WARD_TLS:/usr/local/bin/ward-tls:ro" \
		--tmpfs /work:mode=0755 -w /work --rootfs "$ROOTFS:O" /usr/local/bin/ward "$@" \
		2>&1 || true
}
REQ='{"command": "cat /proc/sys/kernel/hostname; ls /proc | grep -c \"^[0-9]\""}'

# 1. a default container
out=$(crun_ward -- run -- true)
case $out in
*"mount proc on '/proc' (the outer /proc has masked paths"*) pass "default container: ward run names /proc" ;;
*) fail "default container: ward run names /proc" "$out" ;;
esac
out=$(crun_ward -- doctor --json)
case $out in
*'"engine": "podman"'*'unmask=/proc/*'* | *'unmask=/proc/*'*'"engine": "podman"'*)
	pass "default container: doctor says podman and --security-opt unmask=/proc/*" ;;
*) fail "default container: doctor says podman and --security-opt unmask=/proc/*" "$out" ;;
esac

# 2. only /proc unmasked, the default seccomp profile
out=$(echo "$REQ" | crun_ward -i --security-opt 'unmask=/proc/*' -- run --json)
case $out in
*'"sandboxed":true'*'"hostname":"skipped: sethostname EPERM'*)
	pass "unmasked /proc, default seccomp: sandboxed, hostname skipped" ;;
*) fail "unmasked /proc, default seccomp: sandboxed, hostname skipped" "$out" ;;
esac

# 3. Docker-style: clone3 -> ENOSYS
python3 "$SRC/packaging/container/gen-seccomp.py" --clone3-enosys > "$TMP/docker-like.json"
out=$(echo "$REQ" | crun_ward -i --security-opt 'unmask=/proc/*' \
	--security-opt "seccomp=$TMP/docker-like.json" -- run --json)
case $out in
*'"output":"ward\n'*'"sandboxed":true'*) pass "docker-style profile (clone3 ENOSYS): sandboxed" ;;
*) fail "docker-style profile (clone3 ENOSYS): sandboxed" "$out" ;;
esac

# 4. ward's container profile: the hostname set too
out=$(echo "$REQ" | crun_ward -i --security-opt 'unmask=/proc/*' \
	--security-opt "seccomp=$SRC/packaging/container/seccomp.json" -- run --json)
case $out in
*'"output":"ward\n'*'"sandboxed":true'*'"hostname":"ward"'*)
	pass "packaging/container/seccomp.json: sandboxed, hostname set" ;;
*) fail "packaging/container/seccomp.json: sandboxed, hostname set" "$out" ;;
esac

# 5. ward inside ward inside the container: as a user of the container (its
# root, in a rootful container without a user namespace, is the host's root,
# to whom --allow-nested is refused)
out=$(crun_ward --user 65534:65534 --security-opt 'unmask=/proc/*' -- \
	run --allow-nested -- /usr/local/bin/ward run -- sh -c 'echo nested-ok')
case $out in
*nested-ok*) pass "ward inside ward in the container (--allow-nested)" ;;
*) fail "ward inside ward in the container (--allow-nested)" "$out" ;;
esac
out=$(crun_ward --security-opt 'unmask=/proc/*' -- run --allow-nested -- \
	/usr/local/bin/ward run -- sh -c 'echo nested-ok')
case $out in
*nested-ok*) fail "--allow-nested is refused to the host's root" "$out" ;;
*"--allow-nested is refused to the host's root"*) pass "--allow-nested is refused to the host's root" ;;
*) fail "--allow-nested is refused to the host's root" "$out" ;;
esac
out=$(crun_ward --security-opt 'unmask=/proc/*' -- run -- \
	/usr/local/bin/ward run -- sh -c 'echo nested-ok')
case $out in
*nested-ok*) fail "without --allow-nested, ward inside ward is refused" "$out" ;;
*"the outer ward needs --allow-nested"*) pass "without --allow-nested, the inner ward names it" ;;
*) fail "without --allow-nested, the inner ward names it" "$out" ;;
esac

# 6. the image and the Pod
tar -C "$ROOTFS" -c . | podman import -q - "localhost/ward-base-$TAG:bookworm" >/dev/null
mkdir -p "$TMP/ctx/build" "$TMP/ctx/packaging/container"
cp "$WARD" "$TMP/ctx/build/ward"
cp "$WARD_TLS" "$TMP/ctx/build/ward-tls"
cp "$SRC/packaging/container/Containerfile" "$TMP/ctx/packaging/container/"
if podman build -q --runtime runc -f "$TMP/ctx/packaging/container/Containerfile" \
	--build-arg "BASE=localhost/ward-base-$TAG:bookworm" -t "localhost/ward-$TAG:test" \
	"$TMP/ctx" >"$TMP/build.log" 2>&1; then
	pass "podman build of packaging/container/Containerfile"
else
	fail "podman build of packaging/container/Containerfile" "$(tail -5 "$TMP/build.log")"
fi
# the podman run line of docs/containers.md, with the test's image: ward
# serve from the image, MCP on stdin/stdout
line=$(awk '$0 == "<!-- tested: podman-run -->" { m = 1; next }
	m && /^```/ { if (f) exit; f = 1; next } m && f { print; exit }' "$SRC/docs/containers.md")
case $line in
"podman run "*localhost/ward:test) ;;
*) fail "docs/containers.md has the tested podman run line" "$line" ;;
esac
INIT='{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}'
CALL='{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shell", "arguments": {"command": "echo from-image; id -u"}}}'
# shellcheck disable=SC2086
out=$(printf '%s\n' "$INIT" "$CALL" |
	eval "${line%localhost/ward:test}" --label "ward-test=$TAG" "localhost/ward-$TAG:test" 2>&1)
case $out in
*'"id":2'*'"exit_code":0'*'"sandboxed":true'*'"stdout":"from-image\n1000\n"'* | \
*'"id":2'*'"stdout":"from-image\n1000\n"'*'"exit_code":0'*'"sandboxed":true'*)
	pass "docs/containers.md's podman run line: ward serve in the image answers MCP" ;;
*) fail "docs/containers.md's podman run line: ward serve in the image answers MCP" "$out" ;;
esac
# the docker run line of docs/containers.md, run by podman with the same
# flags (there is no Docker here; podman takes systempaths=unconfined too)
dline=$(awk '$0 == "<!-- tested with podman: docker-run -->" { m = 1; next }
	m && /^```/ { if (f) exit; f = 1; next } m && f { print; exit }' "$SRC/docs/containers.md")
case $dline in
"docker run "*localhost/ward:test)
	out=$(printf '%s\n' "$INIT" "$CALL" | (cd "$SRC" && dl=${dline#docker } &&
		eval "podman ${dl%localhost/ward:test}" --label "ward-test=$TAG" \
			"localhost/ward-$TAG:test") 2>&1)
	case $out in
	*'"id":2'*'"exit_code":0'*'"sandboxed":true'*'"stdout":"from-image\n1000\n"'* | \
	*'"id":2'*'"stdout":"from-image\n1000\n"'*'"exit_code":0'*'"sandboxed":true'*)
		pass "docs/containers.md's docker run line, run by podman: ward serve answers MCP" ;;
	*) fail "docs/containers.md's docker run line, run by podman: ward serve answers MCP" "$out" ;;
	esac
	;;
*) fail "docs/containers.md has the docker run line tested with podman" "$dline" ;;
esac
# the shipped manifest, with the test's image, pod name and a command: ward
# run --json, its result in the container's log, after the uid map the Pod's
# container runs in
KUBE_REQ='{\\"command\\": \\"echo kube-ok\\"}'
sed -e "s|localhost/ward:test|localhost/ward-$TAG:test|" -e "s|name: ward-agent|name: ward-agent-$TAG|" \
	-e "s|command: \\[\"/usr/local/bin/ward\", \"serve\"\\]|command: [\"/bin/sh\", \"-c\", \"cat /proc/self/uid_map; echo '$KUBE_REQ' \\| /usr/local/bin/ward run --json\"]|" \
	"$SRC/packaging/container/ward-pod.yaml" > "$TMP/pod.yaml"
grep -q 'echo kube-ok' "$TMP/pod.yaml" || fail "the manifest's command could be replaced" ""
# The manifest's securityContext is the least ward needs: its one relaxation
# is procMount: Unmasked (the same Pod without it fails at /proc, below);
# everything else takes away (a user namespace, uid 1000, no capability, no
# privilege escalation, the runtime's seccomp profile), and nothing else is
# there (no privileged, no added capability, no host namespace).
sc=$(sed -n '/^ *securityContext:/,/^ *resources:/p' "$TMP/pod.yaml" | grep -v '^ *#')
missing=""
for want in 'hostUsers: false' 'procMount: Unmasked' 'type: RuntimeDefault' 'runAsUser: 1000' \
	'runAsNonRoot: true' 'allowPrivilegeEscalation: false' 'drop: \["ALL"\]'; do
	grep -q "^ *$want" "$TMP/pod.yaml" || missing="$missing '$want'"
done
for extra in privileged add: hostPID hostIPC hostNetwork 'type: Unconfined' SYS_ADMIN; do
	! printf '%s\n' "$sc" | grep -q "$extra" || missing="$missing extra:'$extra'"
	! grep -v '^ *#' "$TMP/pod.yaml" | grep -q "^ *$extra" || missing="$missing extra:'$extra'"
done
if [ -z "$missing" ]; then
	pass "the manifest's securityContext: procMount: Unmasked its one relaxation"
else
	fail "the manifest's securityContext: procMount: Unmasked its one relaxation" "$missing"
fi
sed -e "s|name: ward-agent-$TAG|name: ward-agent-m$TAG|" -e '/^ *procMount: Unmasked/d' \
	"$TMP/pod.yaml" > "$TMP/pod-masked.yaml"
# podman learnt procMount: Unmasked in 4.7; Debian 12's 4.3 ignores the
# field. Where the manifest asks for it, the Pod runs under a runtime of the
# test's own that does what the field means (what podman 4.7+ and a cluster
# with ProcMountType do): runc over the OCI config with no masked or
# read-only paths under /proc, nothing else changed. A manifest without the
# field gets runc as it is, and ward stops at /proc.
kube_runtime=runc
case $(podman version --format '{{.Client.Version}}' 2>/dev/null) in
[0-3].* | 4.[0-6].*)
	if grep -q '^ *procMount: Unmasked' "$TMP/pod.yaml"; then
		cat >"$TMP/runc-procmount" <<'RT'
#!/bin/sh
# runc, with the bundle's config.json unmasking /proc (procMount: Unmasked)
b=
prev=
for a; do
	case $prev in --bundle | -b) b=$a ;; esac
	case $a in --bundle=*) b=${a#--bundle=} ;; esac
	prev=$a
done
if [ -n "$b" ] && [ -f "$b/config.json" ]; then
	python3 - "$b/config.json" <<'PY' || exit 1
import json, sys
p = sys.argv[1]
c = json.load(open(p))
lx = c.get("linux", {})
for k in ("maskedPaths", "readonlyPaths"):
    if k in lx:
        lx[k] = [x for x in lx[k] if not (x == "/proc" or x.startswith("/proc/"))]
json.dump(c, open(p, "w"))
PY
fi
exec runc "$@"
RT
		chmod 755 "$TMP/runc-procmount"
		kube_runtime=$TMP/runc-procmount
	fi
	;;
esac
# hostUsers: false is podman's --userns=auto: subordinate ids for its user
# "containers" in /etc/subuid and /etc/subgid, which the machine may not
# have and a test does not change. The Pods run in a private mount
# namespace (unshare -m) where files of the test's own are bound over
# /etc/subuid and /etc/subgid (where the machine has no such files, an
# overlay of /etc adds them: the machine's /etc its lower layer, untouched);
# all is gone with the namespace. The pods are played, read and removed in
# it, where their mounts are.
mkdir -p "$TMP/etc-upper" "$TMP/etc-work"
echo 'containers:2147483647:2147483648' >"$TMP/etc-upper/subuid"
echo 'containers:2147483647:2147483648' >"$TMP/etc-upper/subgid"
cat >"$TMP/kube.sh" <<'KUBE'
set -u
T=$1 TAG=$2 RT=$3
trap 'podman pod rm -f "ward-agent-$TAG" "ward-agent-m$TAG" >/dev/null 2>&1' EXIT
if [ -f /etc/subuid ] && [ -f /etc/subgid ]; then
	mount --bind "$T/etc-upper/subuid" /etc/subuid &&
		mount --bind "$T/etc-upper/subgid" /etc/subgid || exit 1
else
	mount -t overlay overlay -o "lowerdir=/etc,upperdir=$T/etc-upper,workdir=$T/etc-work" /etc ||
		exit 1
fi
for p in "ward-agent-$TAG:$T/pod.yaml:$RT" "ward-agent-m$TAG:$T/pod-masked.yaml:runc"; do
	n=${p%%:*} p=${p#*:}
	if podman --runtime "${p#*:}" kube play "${p%%:*}" >"$T/play-$n.log" 2>&1; then
		podman wait "$n-ward" >/dev/null 2>&1 || true
		podman logs "$n-ward" >"$T/log-$n" 2>&1 || true
	else
		tail -5 "$T/play-$n.log" >"$T/log-$n"
	fi
done
KUBE
unshare -m --propagation private sh "$TMP/kube.sh" "$TMP" "$TAG" "$kube_runtime" ||
	fail "podman kube play in a mount namespace of the test's own" ""
# the Pod's user namespace: its uid 0 is one of the test's subordinate ids
# (not 0 on the host), and the command ran sandboxed inside ward
out=$(cat "$TMP/log-ward-agent-$TAG" 2>/dev/null || true)
case $(printf '%s\n' "$out" | head -1 | tr -s ' ') in
" 0 2147483647 "*) pass "podman kube play of the manifest: hostUsers: false, the Pod in a user namespace" ;;
*) fail "podman kube play of the manifest: hostUsers: false, the Pod in a user namespace" "$out" ;;
esac
case $out in
*'"output":"kube-ok\n"'*'"sandboxed":true'*'"namespaces":["user","mount","pid","net","ipc","uts","cgroup"]'*'"hostname":"skipped: sethostname EPERM'*'"seccomp":"default","capabilities_dropped":true,"no_new_privs":true'*)
	pass "podman kube play of the manifest: a command ran sandboxed through ward in the Pod" ;;
*) fail "podman kube play of the manifest: a command ran sandboxed through ward in the Pod" "$out" ;;
esac
out=$(cat "$TMP/log-ward-agent-m$TAG" 2>/dev/null || true)
case $out in
*'"sandboxed":true'*) fail "the manifest without procMount: Unmasked: ward refuses" "$out" ;;
*"mount proc on '/proc' (the outer /proc has masked paths"*)
	pass "the manifest without procMount: Unmasked: ward fails naming /proc" ;;
*) fail "the manifest without procMount: Unmasked: ward fails naming /proc" "$out" ;;
esac

# 7. a fleet: 20 concurrent ward serve sessions in one container, each
# command's latency (bench/serve-fleet.py)
if out=$(B="$B" python3 "$SRC/bench/serve-fleet.py" --sessions 20 --commands 3 "$WARD" 2>&1); then
	pass "20 concurrent ward serve sessions in one container"
	echo "$out" | sed 's/^/# /'
else
	fail "20 concurrent ward serve sessions in one container" "$out"
fi

[ $fails = 0 ] && echo "# container: all passed" || echo "# container: $fails failed"
[ $fails = 0 ]
