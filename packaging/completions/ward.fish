# fish completion for ward. Installed as $(datadir)/fish/vendor_completions.d/ward.fish.
# Option lists kept in step with each --help by tests/integration/test-completion.c.

function __ward_change_sets
    command -q ward; or return
    ward changes 2>/dev/null | cut -f1
end

set -l cmds run shell serve validate doctor changes diff apply discard
complete -c ward -f
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a run -d 'run a command in a sandbox'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a shell -d 'an interactive sandboxed shell session'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a serve -d 'serve sessions over JSON-RPC / MCP'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a validate -d 'check a command without running it'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a doctor -d 'what this host offers'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a changes -d 'list kept change sets'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a diff -d 'show a change set as a diff'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a apply -d 'apply a change set'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -a discard -d 'drop a change set'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -l version -d 'print the version'
complete -c ward -n "not __fish_seen_subcommand_from $cmds" -l help -d 'show the usage'

# ward run
set -l r "__fish_seen_subcommand_from run"
complete -c ward -n $r -s c -l command -x -d 'run STRING with /bin/sh -c'
complete -c ward -n $r -l no-shell -d 'run the -c string without a shell'
complete -c ward -n $r -l shell -x -a 'sh bash' -d 'the shell that runs the -c string'
complete -c ward -n $r -s C -l workdir -x -a '(__fish_complete_directories)' -d 'the workdir'
complete -c ward -n $r -l workdir-root -x -a '(__fish_complete_directories)' -d 'where a request may name its workdir'
complete -c ward -n $r -l allow-workdir-anywhere -d 'let the workdir be a system directory'
complete -c ward -n $r -l allow-home-workdir -d 'let the workdir be a home directory'
complete -c ward -n $r -l allow-nested -d 'let the command make its own sandboxes'
complete -c ward -n $r -s t -l timeout -x -d 'seconds'
complete -c ward -n $r -l json -d 'read a request on stdin'
complete -c ward -n $r -l setenv -x -d 'NAME=VALUE'
complete -c ward -n $r -l clearenv -d 'start from an empty environment'
complete -c ward -n $r -l ro-bind -r -d 'bind SRC read-only at DST'
complete -c ward -n $r -l bind -r -d 'bind SRC writable at DST'
complete -c ward -n $r -l tmpfs -x -d 'an empty tmpfs at DST'
complete -c ward -n $r -l uid0 -d 'appear as uid 0 inside'
complete -c ward -n $r -l hostname -x -d 'the sandbox hostname'
complete -c ward -n $r -l sandbox -x -a 'required off'
complete -c ward -n $r -l landlock -x -a 'required best-effort off'
complete -c ward -n $r -l landlock-abi-max -x -d 'use at most ABI N'
complete -c ward -n $r -l landlock-min-abi -x -d 'refuse a kernel below ABI N'
complete -c ward -n $r -l seccomp -r -a 'default strict off'
complete -c ward -n $r -l allow-ptrace -d 'let debuggers trace their children'
complete -c ward -n $r -l namespaces -x -a 'user mount pid net ipc uts cgroup'
complete -c ward -n $r -l no-view -d 'keep the host view (measurement only)'
complete -c ward -n $r -l no-cgroup -d 'no cgroup (measurement only)'
complete -c ward -n $r -l net -x -a 'none proxy host' -d 'network mode'
complete -c ward -n $r -l allow-host -x -d 'let the proxy reach HOST'
complete -c ward -n $r -l deny-host -x -d 'refuse HOST'
complete -c ward -n $r -l allow-cidr -x -d 'let addresses in CIDR through'
complete -c ward -n $r -l allow-port -x -d 'a port for host rules'
complete -c ward -n $r -l inject-header -x -d 'HOST=Name: value'
complete -c ward -n $r -l upstream-ca -r -d 'CA certificates for intercepted hosts'
complete -c ward -n $r -l secret -x -d 'NAME=HOST[,HOST...]: a stand-in inside'
complete -c ward -n $r -l allow-request -x -d 'HOST METHOD[,METHOD] PATHGLOB'
complete -c ward -n $r -l net-log -r -d 'JSON lines per proxy connection'
complete -c ward -n $r -l proxy-port -x -d 'where the proxy listens inside'
complete -c ward -n $r -l net-subnet -x -d 'the veth subnet'
complete -c ward -n $r -l net-transport -x -a 'auto veth loopback'
complete -c ward -n $r -l allow-local-port -x -d 'a loopback port in proxy mode'
complete -c ward -n $r -l workdir-mode -x -a 'direct overlay'
complete -c ward -n $r -l changes -x -a '(__ward_change_sets)' -d 'overlay over a kept set'
complete -c ward -n $r -l apply -d 'overlay: apply on success'
complete -c ward -n $r -l discard -d 'overlay: drop the changes'
complete -c ward -n $r -l protect -r -d 'keep PATH read-only too'
complete -c ward -n $r -l allow-write -r -d 'open a protected path'
complete -c ward -n $r -l no-placeholders -d 'do not cover missing protected paths'
complete -c ward -n $r -l memory -x -d 'memory limit'
complete -c ward -n $r -l memory-swap -x -d 'swap on top of --memory'
complete -c ward -n $r -l pids -x -d 'most processes at once'
complete -c ward -n $r -l cpus -x -d 'CPU time in CPUs'
complete -c ward -n $r -l io-weight -x -d 'I/O weight'
complete -c ward -n $r -l max-file-size -x -d 'largest file written'
complete -c ward -n $r -l tmpfs-size -x -d 'size of each tmpfs'
complete -c ward -n $r -l approve -d 'approve a command that needs approval'
complete -c ward -n $r -l policy -r -d 'the policy file'
complete -c ward -n $r -l no-policy -d 'built-in defaults only'
complete -c ward -n $r -s h -l help -d 'show the usage'

# ward shell, ward serve
set -l s "__fish_seen_subcommand_from shell serve"
complete -c ward -n $s -s C -l workdir -x -a '(__fish_complete_directories)'
complete -c ward -n "__fish_seen_subcommand_from serve" -l workdir-root -x -a '(__fish_complete_directories)'
complete -c ward -n "__fish_seen_subcommand_from serve" -l allow-workdir-anywhere
complete -c ward -n "__fish_seen_subcommand_from serve" -l allow-home-workdir
complete -c ward -n $s -s t -l timeout -x
complete -c ward -n $s -l isolation -x -a 'fresh shared'
complete -c ward -n $s -l shell -x -a 'sh bash'
complete -c ward -n $s -l empty-env
complete -c ward -n $s -l sandbox -x -a 'required off'
complete -c ward -n $s -l policy -r
complete -c ward -n $s -l no-policy
complete -c ward -n $s -s h -l help

# ward validate, doctor
set -l v "__fish_seen_subcommand_from validate"
complete -c ward -n $v -s c -l command -x
complete -c ward -n $v -l json
complete -c ward -n $v -l policy -r
complete -c ward -n $v -l no-policy
complete -c ward -n $v -l rules
complete -c ward -n $v -l shell -x -a 'sh bash'
complete -c ward -n $v -l workdir-mode -x -a 'direct overlay'
complete -c ward -n $v -s h -l help
complete -c ward -n "__fish_seen_subcommand_from doctor" -l json
complete -c ward -n "__fish_seen_subcommand_from doctor" -s h -l help

# change sets
set -l c "__fish_seen_subcommand_from changes apply discard"
complete -c ward -n $c -s C -l workdir -x -a '(__fish_complete_directories)'
complete -c ward -n "__fish_seen_subcommand_from changes diff apply discard" -s h -l help
complete -c ward -n "__fish_seen_subcommand_from changes" -l all -d 'every workdir'
complete -c ward -n "__fish_seen_subcommand_from diff apply discard" -a '(__ward_change_sets)'
complete -c ward -n "__fish_seen_subcommand_from apply" -l protect -r
complete -c ward -n "__fish_seen_subcommand_from apply" -l allow-write -r
complete -c ward -n "__fish_seen_subcommand_from apply" -l force -d 'apply over files edited meanwhile'
complete -c ward -n "__fish_seen_subcommand_from apply" -l allow-outside-links -d 'apply links leading outside the workdir'
