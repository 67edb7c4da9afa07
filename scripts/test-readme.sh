#!/bin/sh
# scripts/test-readme.sh install|bench — run the README's install and quick
# start blocks as a new user would, exactly as the README shows them.
#
# Each block is the fenced block after a `<!-- tested: NAME -->` line of
# README.md: what is tested is what a reader copies. Every line of a shell
# block must exit 0 (each line's status is checked, so `a && b` counts).
#
#   install  (the deb tier) the block `install`: its `make ...` lines on this
#            machine in the tree (B as given), the rest in a fresh Debian 12
#            root (tests/container/rootfs.sh, a podman container with /proc
#            unmasked) as the user `me` with sudo, where ./build/deb/ is the
#            packages just built; then, in the same root: `man ward`,
#            `man 5 ward-policy` and `man ward-serve` render without a
#            warning, bash completes `ward r<TAB>` to `run` through the
#            installed completion; the block `quickstart-terminal` as `me`
#            (who has ~/project); the block `quickstart-mcp` pasted as a
#            client would: the server it names started with its args,
#            initialize, tools/list, tools/call shell writing into the -C
#            workdir.
#   bench    (the bench tier) the block `quickstart-bench` in the tree, with
#            QUICK=1 (the smoke run the README mentions).
# Prints "ok - ..." per step; a failure prints "not ok - ..." and exits 1.
# Needs root and podman (install).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$(realpath "${B:-$SRC/build}")
README=$SRC/README.md
T=$(mktemp -d /tmp/ward-readme.XXXXXX)
CID=
cleanup() {
	[ -z "$CID" ] || podman rm -f -t 0 "$CID" >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() { echo "not ok - $1"; shift; [ $# -eq 0 ] || printf '  %s\n' "$@"; exit 1; }

# block NAME: the lines of the fenced block right after the marker (blank
# lines between them allowed), nothing when either is missing
block() {
	awk -v m="<!-- tested: $1 -->" '
		$0 == m { want = 1; next }
		want == 1 && /^```/ { want = 2; next }
		want == 1 && !/^[ \t]*$/ { exit }
		want == 2 && /^```/ { exit }
		want == 2 { print }' "$README"
}
need_block() { # NAME FILE
	block "$1" >"$2"
	[ -s "$2" ] || fail "README.md has a block after '<!-- tested: $1 -->'"
}

# as_script FILE: a script running each line of FILE and checking its status
# (comment-only and blank lines skipped)
as_script() {
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case $line in '' | '#'*) continue ;; esac
		q=$(printf '%s' "$line" | sed "s/'/'\\\\''/g")
		printf "printf '%%s\\\\n' '\$ %s' >&2\n" "$q"
		printf '%s\n' "$line"
		printf "rc=\$?; [ \$rc -eq 0 ] || { echo \"README line %s exited \$rc: %s\" >&2; exit 1; }\n" \
			"$n" "$(printf '%s' "$line" | tr -d '"$`\\')"
	done <"$1"
}

host_make() { # the tree's make, free of the calling make's flags
	(cd "$SRC" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$@")
}

case ${1:-} in
bench)
	need_block quickstart-bench "$T/bench"
	as_script "$T/bench" >"$T/bench.sh"
	# the README's paths are the tree's build/: another B builds there
	if [ "$B" = "$SRC/build" ]; then
		out=$(cd "$SRC" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u B QUICK=1 \
			bash "$T/bench.sh" 2>&1) || fail "the README's bench quick start (QUICK=1)" "$out"
	else
		out=$(cd "$SRC" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL B="$B" QUICK=1 \
			bash "$T/bench.sh" 2>&1) || fail "the README's bench quick start (QUICK=1)" "$out"
	fi
	printf '%s\n' "$out" | tail -15
	echo "ok - the README's bench quick start, as written (QUICK=1)"
	exit 0
	;;
install) ;;
*)
	echo "usage: scripts/test-readme.sh install|bench" >&2
	exit 2
	;;
esac

# every marked block is one this script runs: a marker it does not know
# would leave a block untested while it looks tested
unknown=$(sed -n 's/^<!-- tested: \(.*\) -->$/\1/p' "$README" |
	grep -vx -e install -e quickstart-terminal -e quickstart-mcp -e quickstart-bench || true)
[ -z "$unknown" ] || fail "README.md's tested blocks are all run here" "unknown: $unknown"
[ "$(id -u)" = 0 ] || fail "root (podman)"
command -v podman >/dev/null && command -v runc >/dev/null || fail "podman and runc (scripts/deps.sh container)"
need_block install "$T/install"
need_block quickstart-terminal "$T/terminal"
need_block quickstart-mcp "$T/mcp.json"

# the install block's make lines build here, in the tree
grep '^make ' "$T/install" >"$T/install-host" || true
grep -v '^make ' "$T/install" >"$T/install-root" || true
if [ -s "$T/install-host" ]; then
	as_script "$T/install-host" >"$T/host.sh"
	out=$(host_make env B="$B" sh "$T/host.sh" 2>&1) || fail "the install block's build lines" "$(printf '%s\n' "$out" | tail -20)"
	echo "ok - $(grep -v '^#' "$T/install-host" | sed 's/ *#.*//' | paste -sd';')"
fi
ls "$B"/deb/ward_*.deb >/dev/null 2>&1 || fail "packages in $B/deb (make deb)"

ROOTFS=$("$SRC/tests/container/rootfs.sh") || fail "the Debian rootfs (tests/container/rootfs.sh)"
cat >"$T/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$T/containers.conf"
# a fresh Debian 12 machine: /proc unmasked (docs/containers.md), homes on a
# tmpfs (overlay mode needs an upper directory off overlayfs), the packages
# where the README's ./build/deb/ is
CID=$(podman run -d --rm --security-opt 'unmask=/proc/*' --tmpfs /home:mode=0755 \
	-v "$B/deb:/src/build/deb:ro" -w /src --rootfs "$ROOTFS:O" sleep infinity) ||
	fail "a container on the rootfs"
# a user `me` who may sudo (the machine's admin did that), and a project
podman exec "$CID" sh -c 'useradd -m -s /bin/bash me &&
	echo "me ALL=(ALL) NOPASSWD: ALL" >/etc/sudoers.d/me && chmod 0440 /etc/sudoers.d/me &&
	su me -c "mkdir ~/project && echo hello >~/project/README"' >"$T/log" 2>&1 ||
	fail "the user me" "$(cat "$T/log")"
as_me() { # run a script file as me, in DIR (not on stdin: the commands read it)
	podman exec -u me -w "$1" -e HOME=/home/me -e USER=me -e LANG=C.UTF-8 "$CID" \
		bash -c "$(cat "$2")" bash
}

# the install block as written
as_script "$T/install-root" >"$T/root.sh"
out=$(as_me /src "$T/root.sh" 2>&1) || fail "the README's install block in a fresh Debian 12 root" "$out"
podman exec "$CID" dpkg -s ward 2>/dev/null | grep -q '^Status: install ok installed' ||
	fail "apt installed ward" "$out"
echo "ok - the README's install block in a fresh Debian 12 root ($(grep -v '^make ' "$T/install" | sed 's/ *#.*//' | paste -sd';'))"
# the pages render without a warning (man-db's --warnings: groff's)
for page in ward "5 ward-policy" ward-serve; do
	# shellcheck disable=SC2086
	out=$(podman exec -u me -e MANWIDTH=80 "$CID" sh -c "man --warnings $page 2>&1 >/dev/null; man $page | head -3") ||
		fail "man $page" "$out"
	case $out in
	*[Ww]arning* | *"No manual entry"* | "") fail "man $page renders without a warning" "$out" ;;
	esac
done
echo "ok - man ward, man 5 ward-policy, man ward-serve render without a warning"

# ward r<TAB>: bash-completion loads the installed completion on demand
cat >"$T/comp.sh" <<'SH'
. /usr/share/bash-completion/bash_completion
_completion_loader ward
spec=$(complete -p ward) || { echo "no completion for ward"; exit 1; }
fn=$(printf '%s\n' "$spec" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
COMP_WORDS=(ward r) COMP_CWORD=1 COMP_LINE="ward r" COMP_POINT=6
"$fn" ward r ward
echo "${COMPREPLY[*]}"
SH
out=$(as_me /home/me "$T/comp.sh" 2>&1)
[ "$out" = run ] || fail "bash completes 'ward r<TAB>' to 'run'" "$out"
echo "ok - bash completes 'ward r<TAB>' to 'run' (the installed completion)"

# the terminal quick start, as me
as_script "$T/terminal" >"$T/terminal.sh"
out=$(as_me /home/me "$T/terminal.sh" 2>&1) || fail "the README's terminal quick start" "$out"
case $out in
*built*) ;;
*) fail "the README's terminal quick start printed what the workdir got" "$out" ;;
esac
echo "ok - the README's terminal quick start, as written"

# the MCP configuration, pasted: the server it names, with its args
python3 - "$CID" "$T/mcp.json" <<'PY' || fail "the README's MCP configuration"
import json, subprocess, sys
cid, path = sys.argv[1], sys.argv[2]
cfg = json.load(open(path))
srv = cfg["mcpServers"]["ward"]
args = srv.get("args", [])
workdir = args[args.index("-C") + 1] if "-C" in args else None
# the project the configuration names is the user's own
if workdir:
    subprocess.run(["podman", "exec", "-u", "me", cid, "mkdir", "-p", workdir], check=True)
p = subprocess.Popen(["podman", "exec", "-i", "-u", "me", "-w", "/home/me", "-e", "HOME=/home/me",
                      cid, srv["command"], *args],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
def call(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
                   + "\n").encode())
    line = p.stdout.readline()
    if not line:
        sys.exit(f"no answer to {method}")
    r = json.loads(line)
    if "result" not in r:
        sys.exit(f"{method}: {r}")
    return r["result"]
r = call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test-readme", "version": "1"}})
assert r.get("serverInfo", {}).get("name") == "ward", r
p.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
tools = [t["name"] for t in call(2, "tools/list", {})["tools"]]
assert "shell" in tools, tools
r = call(3, "tools/call", {"name": "shell",
                           "arguments": {"command": "echo from-mcp > mcp.txt && cat mcp.txt"}})
sc = r.get("structuredContent", {})
assert sc.get("exit_code") == 0 and sc.get("sandboxed") and sc.get("stdout") == "from-mcp\n", r
p.stdin.close()
p.wait()
if workdir:
    got = subprocess.run(["podman", "exec", cid, "cat", workdir + "/mcp.txt"],
                         capture_output=True, text=True).stdout
    assert got == "from-mcp\n", f"{workdir}/mcp.txt: {got!r}"
print(f"ok - the README's MCP configuration: {srv['command']} {' '.join(args)}: "
      f"initialize, tools/list ({', '.join(tools)}), tools/call shell")
PY
