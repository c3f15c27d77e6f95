# bash completion for tbdprof: subcommands, their options, traces (*.sqlite) and, after `--`, the
# command being recorded. Installed as share/bash-completion/completions/tbdprof.
_tbdprof() {
    local cur prev words cword
    _init_completion || return
    local i sub=""
    for ((i = 1; i < cword; i++)); do
        case "${words[i]}" in
            --) # after `--` everything is the recorded command's
                _command_offset $((i + 1)); return ;;
            record|report|compare|diff|check|tag|import|export|merge|view|fleet|build) [ -z "$sub" ] && sub=${words[i]} ;;
        esac
    done
    case "$prev" in
        -o|--output|--junit|--budget) _filedir; return ;;
        --format) COMPREPLY=($(compgen -W "text markdown json html chrome" -- "$cur")); return ;;
        --window) COMPREPLY=($(compgen -W "steady iterations all" -- "$cur")); return ;;
        --framework) COMPREPLY=($(compgen -W "pytorch tensorflow jax mxnet auto none" -- "$cur")); return ;;
        --capture-range) COMPREPLY=($(compgen -W "cudaProfilerApi nvtx:" -- "$cur")); return ;;
        --metrics) COMPREPLY=($(compgen -W "flops" -- "$cur")); return ;;
    esac
    local record_opts="-o --output --force --quiet --sim --stacks --framework --iteration-range --capture-range --delay --duration --steps --metrics --help --version"
    local report_opts="--format -o --output --force --quiet --wide --window --iteration-range --batch-size --top --help --version"
    local check_opts="--max-peak-memory --min-gpu-utilization --max-iteration-time --max-p95-iteration-time
                      --min-fp32-utilization --max-exposed-communication --max-rank-imbalance --max-category --require-plausible-tags --budget --junit --force --quiet --window --iteration-range --help --version"
    check_opts+=" --whatif"
    case "$sub" in
        ""|record)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$record_opts --" -- "$cur"))
            elif [ -z "$sub" ]; then
                COMPREPLY=($(compgen -W "record report compare diff check tag import export merge view fleet build" -- "$cur"))
            fi ;;
        report)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$report_opts --collective-durations" -- "$cur")); else _filedir sqlite; fi ;;
        compare|diff)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$report_opts" -- "$cur")); else _filedir sqlite; fi ;;
        check)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$check_opts" -- "$cur")); else _filedir sqlite; fi ;;
        tag)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "--iteration-range --explain --quiet --help --version" -- "$cur")); else _filedir sqlite; fi ;;
        import)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "-o --output --force --quiet --help --version" -- "$cur")); else _filedir '@(json|gz)'; fi ;;
        export)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "--format -o --output --force --quiet --help --version" -- "$cur")); else _filedir sqlite; fi ;;
        merge)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "-o --output --offset-ns --force --quiet --help --version" -- "$cur")); else _filedir sqlite; fi ;;
        build)
            if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "-o --output --force --quiet --iteration-range --help --version" -- "$cur")); else _filedir -d; fi ;;
        *) _filedir ;;
    esac
}
complete -F _tbdprof tbdprof
