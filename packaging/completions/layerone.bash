_layerone() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="layerone"
                ;;
            layerone,catalogue)
                cmd="layerone__subcmd__catalogue"
                ;;
            layerone,cloudlinux)
                cmd="layerone__subcmd__cloudlinux"
                ;;
            layerone,completions)
                cmd="layerone__subcmd__completions"
                ;;
            layerone,contract)
                cmd="layerone__subcmd__contract"
                ;;
            layerone,fleet)
                cmd="layerone__subcmd__fleet"
                ;;
            layerone,help)
                cmd="layerone__subcmd__help"
                ;;
            layerone,install)
                cmd="layerone__subcmd__install"
                ;;
            layerone,job)
                cmd="layerone__subcmd__job"
                ;;
            layerone,join)
                cmd="layerone__subcmd__join"
                ;;
            layerone,mcp)
                cmd="layerone__subcmd__mcp"
                ;;
            layerone,status)
                cmd="layerone__subcmd__status"
                ;;
            layerone,tls)
                cmd="layerone__subcmd__tls"
                ;;
            layerone__subcmd__contract,check)
                cmd="layerone__subcmd__contract__subcmd__check"
                ;;
            layerone__subcmd__contract,help)
                cmd="layerone__subcmd__contract__subcmd__help"
                ;;
            layerone__subcmd__contract__subcmd__help,check)
                cmd="layerone__subcmd__contract__subcmd__help__subcmd__check"
                ;;
            layerone__subcmd__contract__subcmd__help,help)
                cmd="layerone__subcmd__contract__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__fleet,activate)
                cmd="layerone__subcmd__fleet__subcmd__activate"
                ;;
            layerone__subcmd__fleet,assign)
                cmd="layerone__subcmd__fleet__subcmd__assign"
                ;;
            layerone__subcmd__fleet,ca)
                cmd="layerone__subcmd__fleet__subcmd__ca"
                ;;
            layerone__subcmd__fleet,drain)
                cmd="layerone__subcmd__fleet__subcmd__drain"
                ;;
            layerone__subcmd__fleet,events)
                cmd="layerone__subcmd__fleet__subcmd__events"
                ;;
            layerone__subcmd__fleet,help)
                cmd="layerone__subcmd__fleet__subcmd__help"
                ;;
            layerone__subcmd__fleet,init)
                cmd="layerone__subcmd__fleet__subcmd__init"
                ;;
            layerone__subcmd__fleet,maintenance)
                cmd="layerone__subcmd__fleet__subcmd__maintenance"
                ;;
            layerone__subcmd__fleet,nodes)
                cmd="layerone__subcmd__fleet__subcmd__nodes"
                ;;
            layerone__subcmd__fleet,operator)
                cmd="layerone__subcmd__fleet__subcmd__operator"
                ;;
            layerone__subcmd__fleet,reference)
                cmd="layerone__subcmd__fleet__subcmd__reference"
                ;;
            layerone__subcmd__fleet,remove)
                cmd="layerone__subcmd__fleet__subcmd__remove"
                ;;
            layerone__subcmd__fleet,rescue)
                cmd="layerone__subcmd__fleet__subcmd__rescue"
                ;;
            layerone__subcmd__fleet,serve)
                cmd="layerone__subcmd__fleet__subcmd__serve"
                ;;
            layerone__subcmd__fleet,status)
                cmd="layerone__subcmd__fleet__subcmd__status"
                ;;
            layerone__subcmd__fleet,submit)
                cmd="layerone__subcmd__fleet__subcmd__submit"
                ;;
            layerone__subcmd__fleet,token)
                cmd="layerone__subcmd__fleet__subcmd__token"
                ;;
            layerone__subcmd__fleet__subcmd__ca,finish)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__finish"
                ;;
            layerone__subcmd__fleet__subcmd__ca,help)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__help"
                ;;
            layerone__subcmd__fleet__subcmd__ca,rotate)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__rotate"
                ;;
            layerone__subcmd__fleet__subcmd__ca,status)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__status"
                ;;
            layerone__subcmd__fleet__subcmd__ca__subcmd__help,finish)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__finish"
                ;;
            layerone__subcmd__fleet__subcmd__ca__subcmd__help,help)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__fleet__subcmd__ca__subcmd__help,rotate)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__rotate"
                ;;
            layerone__subcmd__fleet__subcmd__ca__subcmd__help,status)
                cmd="layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__status"
                ;;
            layerone__subcmd__fleet__subcmd__help,activate)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__activate"
                ;;
            layerone__subcmd__fleet__subcmd__help,assign)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__assign"
                ;;
            layerone__subcmd__fleet__subcmd__help,ca)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__ca"
                ;;
            layerone__subcmd__fleet__subcmd__help,drain)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__drain"
                ;;
            layerone__subcmd__fleet__subcmd__help,events)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__events"
                ;;
            layerone__subcmd__fleet__subcmd__help,help)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__fleet__subcmd__help,init)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__init"
                ;;
            layerone__subcmd__fleet__subcmd__help,maintenance)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__maintenance"
                ;;
            layerone__subcmd__fleet__subcmd__help,nodes)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__nodes"
                ;;
            layerone__subcmd__fleet__subcmd__help,operator)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__operator"
                ;;
            layerone__subcmd__fleet__subcmd__help,reference)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__reference"
                ;;
            layerone__subcmd__fleet__subcmd__help,remove)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__remove"
                ;;
            layerone__subcmd__fleet__subcmd__help,rescue)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__rescue"
                ;;
            layerone__subcmd__fleet__subcmd__help,serve)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__serve"
                ;;
            layerone__subcmd__fleet__subcmd__help,status)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__status"
                ;;
            layerone__subcmd__fleet__subcmd__help,submit)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__submit"
                ;;
            layerone__subcmd__fleet__subcmd__help,token)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__token"
                ;;
            layerone__subcmd__fleet__subcmd__help__subcmd__ca,finish)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__ca__subcmd__finish"
                ;;
            layerone__subcmd__fleet__subcmd__help__subcmd__ca,rotate)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__ca__subcmd__rotate"
                ;;
            layerone__subcmd__fleet__subcmd__help__subcmd__ca,status)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__ca__subcmd__status"
                ;;
            layerone__subcmd__fleet__subcmd__help__subcmd__operator,add)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__operator__subcmd__add"
                ;;
            layerone__subcmd__fleet__subcmd__help__subcmd__operator,list)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__operator__subcmd__list"
                ;;
            layerone__subcmd__fleet__subcmd__help__subcmd__operator,remove)
                cmd="layerone__subcmd__fleet__subcmd__help__subcmd__operator__subcmd__remove"
                ;;
            layerone__subcmd__fleet__subcmd__operator,add)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__add"
                ;;
            layerone__subcmd__fleet__subcmd__operator,help)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__help"
                ;;
            layerone__subcmd__fleet__subcmd__operator,list)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__list"
                ;;
            layerone__subcmd__fleet__subcmd__operator,remove)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__remove"
                ;;
            layerone__subcmd__fleet__subcmd__operator__subcmd__help,add)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__add"
                ;;
            layerone__subcmd__fleet__subcmd__operator__subcmd__help,help)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__fleet__subcmd__operator__subcmd__help,list)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__list"
                ;;
            layerone__subcmd__fleet__subcmd__operator__subcmd__help,remove)
                cmd="layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__remove"
                ;;
            layerone__subcmd__help,catalogue)
                cmd="layerone__subcmd__help__subcmd__catalogue"
                ;;
            layerone__subcmd__help,cloudlinux)
                cmd="layerone__subcmd__help__subcmd__cloudlinux"
                ;;
            layerone__subcmd__help,completions)
                cmd="layerone__subcmd__help__subcmd__completions"
                ;;
            layerone__subcmd__help,contract)
                cmd="layerone__subcmd__help__subcmd__contract"
                ;;
            layerone__subcmd__help,fleet)
                cmd="layerone__subcmd__help__subcmd__fleet"
                ;;
            layerone__subcmd__help,help)
                cmd="layerone__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__help,install)
                cmd="layerone__subcmd__help__subcmd__install"
                ;;
            layerone__subcmd__help,job)
                cmd="layerone__subcmd__help__subcmd__job"
                ;;
            layerone__subcmd__help,join)
                cmd="layerone__subcmd__help__subcmd__join"
                ;;
            layerone__subcmd__help,mcp)
                cmd="layerone__subcmd__help__subcmd__mcp"
                ;;
            layerone__subcmd__help,status)
                cmd="layerone__subcmd__help__subcmd__status"
                ;;
            layerone__subcmd__help,tls)
                cmd="layerone__subcmd__help__subcmd__tls"
                ;;
            layerone__subcmd__help__subcmd__contract,check)
                cmd="layerone__subcmd__help__subcmd__contract__subcmd__check"
                ;;
            layerone__subcmd__help__subcmd__fleet,activate)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__activate"
                ;;
            layerone__subcmd__help__subcmd__fleet,assign)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__assign"
                ;;
            layerone__subcmd__help__subcmd__fleet,ca)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__ca"
                ;;
            layerone__subcmd__help__subcmd__fleet,drain)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__drain"
                ;;
            layerone__subcmd__help__subcmd__fleet,events)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__events"
                ;;
            layerone__subcmd__help__subcmd__fleet,init)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__init"
                ;;
            layerone__subcmd__help__subcmd__fleet,maintenance)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__maintenance"
                ;;
            layerone__subcmd__help__subcmd__fleet,nodes)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__nodes"
                ;;
            layerone__subcmd__help__subcmd__fleet,operator)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__operator"
                ;;
            layerone__subcmd__help__subcmd__fleet,reference)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__reference"
                ;;
            layerone__subcmd__help__subcmd__fleet,remove)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__remove"
                ;;
            layerone__subcmd__help__subcmd__fleet,rescue)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__rescue"
                ;;
            layerone__subcmd__help__subcmd__fleet,serve)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__serve"
                ;;
            layerone__subcmd__help__subcmd__fleet,status)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__status"
                ;;
            layerone__subcmd__help__subcmd__fleet,submit)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__submit"
                ;;
            layerone__subcmd__help__subcmd__fleet,token)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__token"
                ;;
            layerone__subcmd__help__subcmd__fleet__subcmd__ca,finish)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__ca__subcmd__finish"
                ;;
            layerone__subcmd__help__subcmd__fleet__subcmd__ca,rotate)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__ca__subcmd__rotate"
                ;;
            layerone__subcmd__help__subcmd__fleet__subcmd__ca,status)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__ca__subcmd__status"
                ;;
            layerone__subcmd__help__subcmd__fleet__subcmd__operator,add)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__operator__subcmd__add"
                ;;
            layerone__subcmd__help__subcmd__fleet__subcmd__operator,list)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__operator__subcmd__list"
                ;;
            layerone__subcmd__help__subcmd__fleet__subcmd__operator,remove)
                cmd="layerone__subcmd__help__subcmd__fleet__subcmd__operator__subcmd__remove"
                ;;
            layerone__subcmd__help__subcmd__job,show)
                cmd="layerone__subcmd__help__subcmd__job__subcmd__show"
                ;;
            layerone__subcmd__help__subcmd__job,submit)
                cmd="layerone__subcmd__help__subcmd__job__subcmd__submit"
                ;;
            layerone__subcmd__help__subcmd__job,wait)
                cmd="layerone__subcmd__help__subcmd__job__subcmd__wait"
                ;;
            layerone__subcmd__help__subcmd__tls,rotate-key)
                cmd="layerone__subcmd__help__subcmd__tls__subcmd__rotate__subcmd__key"
                ;;
            layerone__subcmd__job,help)
                cmd="layerone__subcmd__job__subcmd__help"
                ;;
            layerone__subcmd__job,show)
                cmd="layerone__subcmd__job__subcmd__show"
                ;;
            layerone__subcmd__job,submit)
                cmd="layerone__subcmd__job__subcmd__submit"
                ;;
            layerone__subcmd__job,wait)
                cmd="layerone__subcmd__job__subcmd__wait"
                ;;
            layerone__subcmd__job__subcmd__help,help)
                cmd="layerone__subcmd__job__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__job__subcmd__help,show)
                cmd="layerone__subcmd__job__subcmd__help__subcmd__show"
                ;;
            layerone__subcmd__job__subcmd__help,submit)
                cmd="layerone__subcmd__job__subcmd__help__subcmd__submit"
                ;;
            layerone__subcmd__job__subcmd__help,wait)
                cmd="layerone__subcmd__job__subcmd__help__subcmd__wait"
                ;;
            layerone__subcmd__tls,help)
                cmd="layerone__subcmd__tls__subcmd__help"
                ;;
            layerone__subcmd__tls,rotate-key)
                cmd="layerone__subcmd__tls__subcmd__rotate__subcmd__key"
                ;;
            layerone__subcmd__tls__subcmd__help,help)
                cmd="layerone__subcmd__tls__subcmd__help__subcmd__help"
                ;;
            layerone__subcmd__tls__subcmd__help,rotate-key)
                cmd="layerone__subcmd__tls__subcmd__help__subcmd__rotate__subcmd__key"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        layerone)
            opts="-h -V --help --version catalogue contract job install status tls cloudlinux fleet join mcp completions help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__catalogue)
            opts="-h --json --openapi --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__cloudlinux)
            opts="-h --data-dir --root --platform --backend --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --data-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --backend)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__completions)
            opts="-h --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__contract)
            opts="-h --help check help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__contract__subcmd__check)
            opts="-h --catalogue --live --url --key --pin --dev --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --catalogue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__contract__subcmd__help)
            opts="check help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__contract__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__contract__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet)
            opts="-h --help init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__activate)
            opts="-h --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__assign)
            opts="-h --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca)
            opts="-h --help rotate finish status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__finish)
            opts="-h --dir --wait --allow-down --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__help)
            opts="rotate finish status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__finish)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__rotate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__rotate)
            opts="-h --dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__ca__subcmd__status)
            opts="-h --dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__drain)
            opts="-h --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__events)
            opts="-h --follow --node --after --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --node)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help)
            opts="init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__activate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__assign)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__ca)
            opts="rotate finish status"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__ca__subcmd__finish)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__ca__subcmd__rotate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__ca__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__drain)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__events)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__init)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__maintenance)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__nodes)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__operator)
            opts="add remove list"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__operator__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__operator__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__operator__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__reference)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__rescue)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__submit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__help__subcmd__token)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__init)
            opts="-h --dir --name --listen --broker --broker-name --replicas --monitor-port --cluster-name --cluster-listen --route --from --files-only --no-units --node --dev --wait --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --broker)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --broker-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replicas)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --monitor-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --route)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --node)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__maintenance)
            opts="-h --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__nodes)
            opts="-h --json --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator)
            opts="-h --help add remove list help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__add)
            opts="-h --dir --out --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__help)
            opts="add remove list help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__help__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__list)
            opts="-h --dir --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__operator__subcmd__remove)
            opts="-h --dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__reference)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__remove)
            opts="-h --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__rescue)
            opts="-h --broker --token --dev --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --broker)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --token)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__serve)
            opts="-h --dir --no-check --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__status)
            opts="-h --dev --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__submit)
            opts="-h --wait --timeout --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__fleet__subcmd__token)
            opts="-h --ttl --creds --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help)
            opts="catalogue contract job install status tls cloudlinux fleet join mcp completions help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__catalogue)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__cloudlinux)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__contract)
            opts="check"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__contract__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet)
            opts="init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__activate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__assign)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__ca)
            opts="rotate finish status"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__ca__subcmd__finish)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__ca__subcmd__rotate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__ca__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__drain)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__events)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__init)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__maintenance)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__nodes)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__operator)
            opts="add remove list"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__operator__subcmd__add)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__operator__subcmd__list)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__operator__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__reference)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__remove)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__rescue)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__submit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__fleet__subcmd__token)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__install)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__job)
            opts="submit show wait"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__job__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__job__subcmd__submit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__job__subcmd__wait)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__join)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__mcp)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__tls)
            opts="rotate-key"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__help__subcmd__tls__subcmd__rotate__subcmd__key)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__install)
            opts="-h --root --check --name --platform --listen --runner --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runner)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job)
            opts="-h --help submit show wait help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__help)
            opts="submit show wait help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__help__subcmd__submit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__help__subcmd__wait)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__show)
            opts="-h --url --key --pin --dev --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__submit)
            opts="-h --url --key --pin --dev --file --wait --timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__job__subcmd__wait)
            opts="-h --url --key --pin --dev --timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pin)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__join)
            opts="-h --name --dev --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__mcp)
            opts="-h --socket --dev --modules --max-tools --allow-destructive-without-confirmation --rate-limit --wait-secs --fleet-identity --identity-file --fleet-credential --no-fleet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --socket)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --modules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-tools)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate-limit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait-secs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fleet-identity)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fleet-credential)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__status)
            opts="-h --root --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__tls)
            opts="-h --help rotate-key help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__tls__subcmd__help)
            opts="rotate-key help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__tls__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__tls__subcmd__help__subcmd__rotate__subcmd__key)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        layerone__subcmd__tls__subcmd__rotate__subcmd__key)
            opts="-h --root --confirm --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _layerone -o nosort -o bashdefault -o default layerone
else
    complete -F _layerone -o bashdefault -o default layerone
fi
