# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_layerone_global_optspecs
    string join \n h/help V/version
end

function __fish_layerone_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_layerone_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_layerone_using_subcommand
    set -l cmd (__fish_layerone_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c layerone -n "__fish_layerone_needs_command" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_needs_command" -s V -l version -d 'Print version'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "catalogue" -d 'List every operation this build offers'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "job" -d 'Submit, show or wait for jobs on a node'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "install" -d 'Install or converge this server (or a sysroot) as a node; run it again at will'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "status" -d 'What is installed, what drifted, units, certificate, and the runner\'s last pass'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "cloudlinux" -d 'CloudLinux\'s panel-integration scripts (integration.ini), answered from state.db'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "completions" -d 'Print the completion script of a shell (bash, zsh or fish) on standard output'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand catalogue" -l json -d 'Print the whole catalogue, with request and result schemas, as JSON'
complete -c layerone -n "__fish_layerone_using_subcommand catalogue" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "submit" -d 'Submit a job. The envelope is JSON: an argument, `-` for stdin, or --file. A missing request_id is generated'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "show" -d 'Show one job'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "wait" -d 'Wait until a job succeeds, fails or is superseded'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l pin -d 'The SHA-256 pin (hex) of the node\'s certificate' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l dev -d 'Without --url: read URL, key and pin from a dev node\'s dev.json' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l file -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l timeout -d 'With --wait: give up after this many seconds' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l wait -d 'Wait until the job reaches a terminal state and print that'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l pin -d 'The SHA-256 pin (hex) of the node\'s certificate' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l dev -d 'Without --url: read URL, key and pin from a dev node\'s dev.json' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l pin -d 'The SHA-256 pin (hex) of the node\'s certificate' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l dev -d 'Without --url: read URL, key and pin from a dev node\'s dev.json' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l timeout -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "submit" -d 'Submit a job. The envelope is JSON: an argument, `-` for stdin, or --file. A missing request_id is generated'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one job'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "wait" -d 'Wait until a job succeeds, fails or is superseded'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand install" -l root -d 'The system root to install into: `/` on a server, a directory for a sysroot' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand install" -l name -d 'The node\'s fully qualified name (required the first time; its certificate and HTTPS vhost are for this name)' -r
complete -c layerone -n "__fish_layerone_using_subcommand install" -l platform -d 'The platform profile: debian or cloudlinux (default debian on the first install)' -r
complete -c layerone -n "__fish_layerone_using_subcommand install" -l listen -d 'Where the API listens (default 127.0.0.1:8443 on the first install)' -r
complete -c layerone -n "__fish_layerone_using_subcommand install" -l runner -d 'How the runner is triggered: timer (oneshot + 15 s timer + path unit) or watch' -r
complete -c layerone -n "__fish_layerone_using_subcommand install" -l check -d 'Print what a run would change, and change nothing'
complete -c layerone -n "__fish_layerone_using_subcommand install" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand status" -l root -d 'The system root the node is installed in: `/` on a server, a directory for a sysroot' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand status" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l data-dir -d 'The node\'s data directory (its state.db is read, never written)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l root -d 'The system root: `/` in production' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l platform -d 'The platform profile; default: the one `layerone install` recorded' -r
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l backend -d '`sim`: look for alt-php and dbctl in the root instead of this machine (dev nodes, tests)' -r
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand completions" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "catalogue" -d 'List every operation this build offers'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "job" -d 'Submit, show or wait for jobs on a node'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "install" -d 'Install or converge this server (or a sysroot) as a node; run it again at will'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "status" -d 'What is installed, what drifted, units, certificate, and the runner\'s last pass'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "cloudlinux" -d 'CloudLinux\'s panel-integration scripts (integration.ini), answered from state.db'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "completions" -d 'Print the completion script of a shell (bash, zsh or fish) on standard output'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue job install status cloudlinux completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "submit" -d 'Submit a job. The envelope is JSON: an argument, `-` for stdin, or --file. A missing request_id is generated'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "show" -d 'Show one job'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "wait" -d 'Wait until a job succeeds, fails or is superseded'
