# bash completion for ward -*- shell-script -*-
# Installed as $(datadir)/bash-completion/completions/ward. The option lists
# are kept in step with each subcommand's --help by
# tests/integration/test-completion.c.

_ward_commands="run shell serve validate doctor changes diff apply discard"

_ward_opts_run="-c --command --shell --no-shell -C --workdir --workdir-root --allow-workdir-anywhere
 --allow-home-workdir --allow-nested -t --timeout --json --setenv --clearenv --ro-bind --bind --tmpfs --uid0
 --hostname --sandbox --landlock --landlock-abi-max --landlock-min-abi --seccomp --allow-ptrace
 --namespaces --no-view --no-cgroup --net --allow-host --deny-host --allow-cidr --allow-port
 --inject-header --upstream-ca --secret --allow-request --net-log --proxy-port --net-subnet --net-transport --allow-local-port
 --workdir-mode --changes --apply --discard --protect --allow-write --no-placeholders --memory
 --memory-swap --pids --cpus --io-weight --max-file-size --tmpfs-size --approve --policy
 --no-policy -h --help"
_ward_opts_shell="-C --workdir -t --timeout --isolation --shell --empty-env --sandbox --policy --no-policy
 -h --help"
_ward_opts_serve="-C --workdir --workdir-root --allow-workdir-anywhere --allow-home-workdir
 -t --timeout --isolation --shell --empty-env --sandbox --policy --no-policy -h --help"
_ward_opts_validate="-c --command --shell --workdir-mode --json --policy --no-policy --rules -h --help"
_ward_opts_doctor="--json -h --help"
_ward_opts_changes="--all -C --workdir -h --help"
_ward_opts_diff="-h --help"
_ward_opts_apply="-C --workdir --protect --allow-write --force --allow-outside-links -h --help"
_ward_opts_discard="-C --workdir -h --help"

# The kept change sets of the workdir on the line (-C DIR), else of the
# current directory: the first column of `ward changes`.
_ward_change_sets()
{
	local i dir=
	for ((i = 2; i < cword; i++)); do
		case ${words[i]} in
		-C | --workdir) dir=${words[i + 1]} ;;
		--workdir=*) dir=${words[i]#--workdir=} ;;
		esac
	done
	if [[ -n $dir ]]; then
		ward changes --workdir "$dir" 2>/dev/null | cut -f1
	else
		ward changes 2>/dev/null | cut -f1
	fi
}

_ward()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n = || return
	else
		cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
	fi

	if ((cword == 1)); then
		COMPREPLY=($(compgen -W "$_ward_commands --help --version" -- "$cur"))
		return
	fi
	local cmd=${words[1]}

	# a value after an option that takes one
	case $prev in
	--net) COMPREPLY=($(compgen -W "none proxy host" -- "$cur")); return ;;
	--sandbox) COMPREPLY=($(compgen -W "required off" -- "$cur")); return ;;
	--landlock) COMPREPLY=($(compgen -W "required best-effort off" -- "$cur")); return ;;
	--seccomp)
		COMPREPLY=($(compgen -W "default strict off" -- "$cur") $(compgen -f -- "$cur"))
		return
		;;
	--workdir-mode) COMPREPLY=($(compgen -W "direct overlay" -- "$cur")); return ;;
	--net-transport) COMPREPLY=($(compgen -W "auto veth loopback" -- "$cur")); return ;;
	--isolation) COMPREPLY=($(compgen -W "fresh shared" -- "$cur")); return ;;
	--namespaces)
		local pre=${cur%"${cur##*,}"}
		COMPREPLY=($(compgen -P "$pre" -W "user mount pid net ipc uts cgroup" -- "${cur##*,}"))
		compopt -o nospace 2>/dev/null
		return
		;;
	--changes) COMPREPLY=($(compgen -W "$(_ward_change_sets)" -- "$cur")); return ;;
	-C | --workdir | --workdir-root | --tmpfs)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	--policy | --net-log | --upstream-ca | --ro-bind | --bind)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	-c | --command | -t | --timeout | --setenv | --hostname | --landlock-abi-max | \
		--landlock-min-abi | --allow-host | --deny-host | --allow-cidr | --allow-port | \
		--inject-header | --secret | --allow-request | --proxy-port | --net-subnet | --allow-local-port | --protect | \
		--allow-write | --memory | --memory-swap | --pids | --cpus | --io-weight | \
		--max-file-size | --tmpfs-size)
		return
		;;
	esac

	# after "--", ward run takes a command line
	local i
	for ((i = 2; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done

	local opts_var=_ward_opts_${cmd}
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${!opts_var-}" -- "$cur"))
		return
	fi
	case $cmd in
	diff | apply | discard) COMPREPLY=($(compgen -W "$(_ward_change_sets)" -- "$cur")) ;;
	esac
} &&
	complete -F _ward ward
