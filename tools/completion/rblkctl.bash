# SPDX-License-Identifier: MIT
# bash completion for rblkctl: commands, volume subcommands, options, and
# volume names from the running target (nothing when it cannot be reached).

_rblkctl_volumes()
{
	local sock=()
	[ -n "${_rblkctl_socket:-}" ] && sock=(--socket "$_rblkctl_socket")
	timeout 2 rblkctl "${sock[@]}" volume list 2>/dev/null | awk 'NR > 1 { print $1 }'
}

_rblkctl()
{
	local cur prev cmd sub i words_left=()
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	_rblkctl_socket=
	# The command and subcommand: the first words that are not options
	# (or the value of --socket).
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket) _rblkctl_socket=${COMP_WORDS[i + 1]}; ((i++)) ;;
		-*) ;;
		*) words_left+=("${COMP_WORDS[i]}") ;;
		esac
	done
	cmd=${words_left[0]:-}
	sub=${words_left[1]:-}

	case $prev in
	--socket|--path|--file|--generate|--secret-file|--ceph-conf|--ceph-keyring)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--device) COMPREPLY=($(compgen -f -- "${cur:-/dev/}")); return ;;
	--transport) COMPREPLY=($(compgen -W "tcp rdma" -- "$cur")); return ;;
	--backend) COMPREPLY=($(compgen -W "uring aio" -- "$cur")); return ;;
	--poll) COMPREPLY=($(compgen -W "event busy adaptive" -- "$cur")); return ;;
	--recovery) COMPREPLY=($(compgen -W "auto manual off" -- "$cur")); return ;;
	--batch-io) COMPREPLY=($(compgen -W "auto off" -- "$cur")); return ;;
	--pin-queues) COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
	--read-policy) COMPREPLY=($(compgen -W "standby spread" -- "$cur")); return ;;
	esac

	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "attach detach list failback recover restart volume stats discover status reload --socket --json --help --version" -- "$cur"))
		return
	fi
	case $cmd in
	volume)
		if [ -z "$sub" ]; then
			COMPREPLY=($(compgen -W "create delete resize list show allow deny secret set" -- "$cur"))
			return
		fi
		if [[ $cur == -* ]]; then
			case $sub in
			create) COMPREPLY=($(compgen -W "--size --path --device --backend --ro --allow-any-host --rbd --ceph-conf --ceph-id --ceph-keyring --json --help" -- "$cur")) ;;
			delete) COMPREPLY=($(compgen -W "--force --remove-file --json --help" -- "$cur")) ;;
			resize) COMPREPLY=($(compgen -W "--size --json --help" -- "$cur")) ;;
			allow|deny) COMPREPLY=($(compgen -W "--any --json --help" -- "$cur")) ;;
			secret) COMPREPLY=($(compgen -W "--file --generate --clear --json --help" -- "$cur")) ;;
			*) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
			esac
			return
		fi
		# The volume name comes right after the subcommand.
		if [ ${#words_left[@]} -eq 2 ] && [ "$sub" != create ] && [ "$sub" != list ]; then
			COMPREPLY=($(compgen -W "$(_rblkctl_volumes)" -- "$cur"))
		elif [ "$sub" = set ]; then
			COMPREPLY=($(compgen -W "read_only= direct= allow_any_host= secret_file=" -- "$cur"))
			compopt -o nospace 2>/dev/null
		fi
		;;
	stats)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--watch --count --json --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_rblkctl_volumes)" -- "$cur"))
		fi
		;;
	attach)
		COMPREPLY=($(compgen -W "--target --volume --transport --queues --depth --hostname --secret-file --timeout --keep-alive-tmo --io-timeout --reconnect-delay --ctrl-loss-tmo --fast-io-fail-tmo --poll --poll-us --batch-io --pin-queues --failback-delay --read-policy --recovery --no-recovery --foreground --help" -- "$cur")) ;;
	discover)
		COMPREPLY=($(compgen -W "--target --transport --hostname --volume --secret-file --json --help" -- "$cur")) ;;
	detach|recover|restart|failback)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--all --timeout --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(ls /dev/ublkb* 2>/dev/null)" -- "$cur"))
		fi
		;;
	*) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
	esac
}
complete -F _rblkctl rblkctl
