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
complete -c layerone -n "__fish_layerone_needs_command" -f -a "contract" -d 'Check a control plane\'s contract against a node\'s catalogue'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "job" -d 'Submit, show or wait for jobs on a node'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "install" -d 'Install or converge this server (or a sysroot) as a node; run it again at will'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "status" -d 'What is installed, what drifted, units, certificate, and the runner\'s last pass'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "tls" -d 'The node\'s TLS key: rotate it in two steps, prepare then confirm'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "cloudlinux" -d 'CloudLinux\'s panel-integration scripts (integration.ini), answered from state.db'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "fleet" -d 'The fleet: create it, mint join tokens, list and assign nodes, submit over the broker, follow its events, drain or remove a node, rescue this one'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "join" -d 'Join a fleet with a one-time token (`layerone fleet token`)'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "mcp" -d 'Serve this node\'s operations as MCP tools on stdio, for an operator\'s MCP client, through the API\'s local socket'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "completions" -d 'Print the completion script of a shell (bash, zsh or fish) on standard output'
complete -c layerone -n "__fish_layerone_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand catalogue" -l json -d 'Print the whole catalogue as JSON: its version, its SHA-256 and every operation with request and result schemas (the form `layerone contract check --catalogue` reads)'
complete -c layerone -n "__fish_layerone_using_subcommand catalogue" -l openapi -d 'Print the OpenAPI document of the node\'s HTTP API (what `GET /v1/openapi.json` serves)'
complete -c layerone -n "__fish_layerone_using_subcommand catalogue" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and not __fish_seen_subcommand_from check help" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and not __fish_seen_subcommand_from check help" -f -a "check" -d 'Check a control plane\'s contract (what it sends, what it reads) against a node\'s catalogue; print the JSON report and exit 1 if anything it depends on is not given'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and not __fish_seen_subcommand_from check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -l catalogue -d 'Check against this catalogue file (`layerone catalogue --json`, or a node\'s `/v1/catalogue`) instead of this build\'s' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -l pin -d 'The node\'s pin: `spki-sha256:<hex>` (its key\'s, as `layerone install` and `layerone status` print it), or the hex SHA-256 of its certificate (the older form)' -r
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -l dev -d 'Without --url: read URL, key and pin from a dev node\'s dev.json' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -l live -d 'Check against a running node\'s catalogue, reached like `layerone job`'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check a control plane\'s contract (what it sends, what it reads) against a node\'s catalogue; print the JSON report and exit 1 if anything it depends on is not given'
complete -c layerone -n "__fish_layerone_using_subcommand contract; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "submit" -d 'Submit a job. The envelope is JSON: an argument, `-` for stdin, or --file. A missing request_id is generated'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "show" -d 'Show one job'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "wait" -d 'Wait until a job succeeds, fails or is superseded'
complete -c layerone -n "__fish_layerone_using_subcommand job; and not __fish_seen_subcommand_from submit show wait help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l pin -d 'The node\'s pin: `spki-sha256:<hex>` (its key\'s, as `layerone install` and `layerone status` print it), or the hex SHA-256 of its certificate (the older form)' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l dev -d 'Without --url: read URL, key and pin from a dev node\'s dev.json' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l file -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l timeout -d 'With --wait: give up after this many seconds' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -l wait -d 'Wait until the job reaches a terminal state and print that'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from submit" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l pin -d 'The node\'s pin: `spki-sha256:<hex>` (its key\'s, as `layerone install` and `layerone status` print it), or the hex SHA-256 of its certificate (the older form)' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -l dev -d 'Without --url: read URL, key and pin from a dev node\'s dev.json' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l url -d 'The node\'s API URL, such as https://127.0.0.1:8443' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l key -d 'The API key' -r
complete -c layerone -n "__fish_layerone_using_subcommand job; and __fish_seen_subcommand_from wait" -l pin -d 'The node\'s pin: `spki-sha256:<hex>` (its key\'s, as `layerone install` and `layerone status` print it), or the hex SHA-256 of its certificate (the older form)' -r
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
complete -c layerone -n "__fish_layerone_using_subcommand tls; and not __fish_seen_subcommand_from rotate-key help" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand tls; and not __fish_seen_subcommand_from rotate-key help" -f -a "rotate-key" -d 'Prepare a new key and certificate beside the served pair and print the new pin (the API keeps serving the old key); with --confirm, switch to the prepared key and restart the API'
complete -c layerone -n "__fish_layerone_using_subcommand tls; and not __fish_seen_subcommand_from rotate-key help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand tls; and __fish_seen_subcommand_from rotate-key" -l root -d 'The system root the node is installed in: `/` on a server, a directory for a sysroot' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand tls; and __fish_seen_subcommand_from rotate-key" -l confirm -d 'Switch to the prepared key, once the control plane holds its pin'
complete -c layerone -n "__fish_layerone_using_subcommand tls; and __fish_seen_subcommand_from rotate-key" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand tls; and __fish_seen_subcommand_from help" -f -a "rotate-key" -d 'Prepare a new key and certificate beside the served pair and print the new pin (the API keeps serving the old key); with --confirm, switch to the prepared key and restart the API'
complete -c layerone -n "__fish_layerone_using_subcommand tls; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l data-dir -d 'The node\'s data directory (its state.db is read, never written)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l root -d 'The system root: `/` in production' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l platform -d 'The platform profile; default: the one `layerone install` recorded' -r
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -l backend -d '`sim`: look for alt-php and dbctl in the root instead of this machine (dev nodes, tests)' -r
complete -c layerone -n "__fish_layerone_using_subcommand cloudlinux" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "init" -d 'Create the fleet on this host: its CA, the broker\'s configuration and unit, the streams and buckets, the catalogue; register this node; print a join token. Run again, it changes nothing and never makes another CA'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "serve" -d 'Run the fleet\'s service beside the broker: joins, the broker\'s configuration, node liveness, dead letters'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "token" -d 'Mint a one-time join token for a node'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "nodes" -d 'Every node: state (up, down, lost, maintenance, draining, incompatible), last seen, assignment, what it reports'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "assign" -d 'Set a node\'s modules (core is always assigned)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "submit" -d 'Submit a request to a node over the broker'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "events" -d 'Print the events stream as JSON lines; with --follow, keep printing'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "drain" -d 'No new work for a node; its queued work waits'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "maintenance" -d 'Maintenance: like drain, without leaving'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "activate" -d 'Back to taking work'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "remove" -d 'Remove a node: its credential is revoked at once'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "rescue" -d 'Bring a cut-off node back, keeping its identity, queued work and unpublished events: other brokers, or a fresh token'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "ca" -d 'Rotate the fleet\'s CA while the fleet runs (on the host of the administrative directory, beside the broker): `rotate`, then `finish` once every node trusts the new CA'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "operator" -d 'Operators\' credentials (an operator session\'s reach into the fleet), on the host of the administrative directory: `add`, `remove`, `list`'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "reference" -d 'Print the reference part of docs/fleet.md: every subject, stream, bucket, permission and message schema, generated from the protocol\'s declarations'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "status" -d 'This node\'s fleet link: joined or not, connected or cut off since when, events waiting'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and not __fish_seen_subcommand_from init serve token nodes assign submit events drain maintenance activate remove rescue ca operator reference status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l dir -d 'The administrative directory: the fleet\'s trust roots, kept on this host only' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l name -d 'The fleet\'s name' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l listen -d 'Where the broker listens for clients' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l broker -d 'Where nodes reach the broker, `tls://HOST:PORT` (repeat for a cluster\'s servers)' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l broker-name -d 'A name or address the broker\'s certificate is for (repeatable)' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l replicas -d 'How many copies of each stream a broker cluster keeps' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l monitor-port -d 'The broker\'s monitoring port on loopback (0: none)' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l cluster-name -d 'This broker\'s cluster (a fleet that outgrew one broker): its name, shared by every server' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l cluster-listen -d 'Where this server listens for its cluster peers' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l route -d 'A peer\'s route, `nats-route://HOST:PORT` (repeatable)' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l from -d 'Add a server to an existing fleet: take the fleet\'s CA and credentials from its administrative directory (copied over a private channel to this host)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l node -d 'Register this node under this name' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l dev -d 'A dev node\'s sandbox (`layerone-dev --root`), instead of this server\'s installed node' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l wait -d 'How long to wait for the broker to answer' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l files-only -d 'Write the files only; run init again once the broker is started'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -l no-units -d 'Do not install and start the broker\'s and the fleet service\'s units: the broker is started otherwise (a container, a test)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from serve" -l dir -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from serve" -l no-check -d 'Do not run `nats-server -t` on a derived configuration (its binary is not at the node\'s program path)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from token" -l ttl -d 'How long the token is good for, in seconds' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from token" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from token" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from nodes" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from nodes" -l json
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from nodes" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from assign" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from assign" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from submit" -l timeout -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from submit" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from submit" -l wait -d 'Wait for the job\'s final state (or the node\'s refusal) and print it'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from submit" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from events" -l node -d 'Only this node\'s events' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from events" -l after -d 'Start after this stream sequence (0: from the oldest kept)' -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from events" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from events" -l follow
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from events" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from drain" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from drain" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from maintenance" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from maintenance" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from activate" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from activate" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from remove" -l creds -d 'The control plane\'s credential (made by `layerone fleet init`)' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from rescue" -l broker -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from rescue" -l token -r
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from rescue" -l dev -d 'A dev node\'s sandbox (`layerone-dev --root`), instead of this server\'s installed node' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from rescue" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from ca" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from ca" -f -a "rotate" -d 'Make the new CA beside the old one and have every node trust both; the broker keeps the old CA\'s certificate until `finish`'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from ca" -f -a "finish" -d 'Once every node that heartbeats trusts the new CA: the broker\'s certificate from the new CA (reloaded), then the old CA dropped from what nodes trust and what tokens pin'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from ca" -f -a "status" -d 'The fleet\'s CA, its trust bundle, and during a rotation which nodes trust the new CA'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from ca" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from operator" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from operator" -f -a "add" -d 'Issue an operator a credential of its own: submit to any node, read events and the fleet\'s state; the broker is reloaded with its user'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from operator" -f -a "remove" -d 'Revoke an operator: its user leaves the broker\'s configuration (reloaded)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from operator" -f -a "list" -d 'The registered operators and their public keys'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from operator" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from reference" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from status" -l dev -d 'A dev node\'s sandbox (`layerone-dev --root`), instead of this server\'s installed node' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "init" -d 'Create the fleet on this host: its CA, the broker\'s configuration and unit, the streams and buckets, the catalogue; register this node; print a join token. Run again, it changes nothing and never makes another CA'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "serve" -d 'Run the fleet\'s service beside the broker: joins, the broker\'s configuration, node liveness, dead letters'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "token" -d 'Mint a one-time join token for a node'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "nodes" -d 'Every node: state (up, down, lost, maintenance, draining, incompatible), last seen, assignment, what it reports'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "assign" -d 'Set a node\'s modules (core is always assigned)'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "submit" -d 'Submit a request to a node over the broker'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "events" -d 'Print the events stream as JSON lines; with --follow, keep printing'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "drain" -d 'No new work for a node; its queued work waits'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "maintenance" -d 'Maintenance: like drain, without leaving'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "activate" -d 'Back to taking work'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a node: its credential is revoked at once'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "rescue" -d 'Bring a cut-off node back, keeping its identity, queued work and unpublished events: other brokers, or a fresh token'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "ca" -d 'Rotate the fleet\'s CA while the fleet runs (on the host of the administrative directory, beside the broker): `rotate`, then `finish` once every node trusts the new CA'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "operator" -d 'Operators\' credentials (an operator session\'s reach into the fleet), on the host of the administrative directory: `add`, `remove`, `list`'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "reference" -d 'Print the reference part of docs/fleet.md: every subject, stream, bucket, permission and message schema, generated from the protocol\'s declarations'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "status" -d 'This node\'s fleet link: joined or not, connected or cut off since when, events waiting'
complete -c layerone -n "__fish_layerone_using_subcommand fleet; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand join" -l name -d 'This node\'s name, if the token does not name it' -r
complete -c layerone -n "__fish_layerone_using_subcommand join" -l dev -d 'A dev node\'s sandbox (`layerone-dev --root`), instead of this server\'s installed node' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand join" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l socket -d 'The API\'s local socket. Default: /run/layerone/operators/api.sock, or with --dev the dev node\'s' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l dev -d 'A dev node\'s dev.json, whose local socket to use' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l modules -d 'List only these modules\' operations (and the read tools), e.g. `web,mail`' -r
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l max-tools -d 'Refuse to start with more tools than this (some clients refuse more than 128)' -r
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l rate-limit -d 'Tool calls per minute this session may make; past it a call is a tool error' -r
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l wait-secs -d 'How long a call waits for its job before answering `still_running`, in seconds' -r
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l fleet-identity -d 'The fleet identity the node is named by when it joined a fleet. Default: /etc/layerone/fleet/identity.json, or with --dev the dev node\'s' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l identity-file -d 'The node\'s identity file (derived by `layerone install`), the start of the session\'s instructions when it names this node' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l fleet-credential -d 'An operator\'s credential (`layerone fleet operator add`): the session also reaches the fleet\'s other nodes, each operation\'s tool taking `target_node`. Default: /etc/layerone/fleet/operator.json when it exists' -r -F
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l allow-destructive-without-confirmation -d 'Run destructive calls (remove, suspend, restore...) without asking the operator to confirm them, also on clients that cannot ask'
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -l no-fleet -d 'Reach this node only, even where an operator\'s credential is installed'
complete -c layerone -n "__fish_layerone_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand completions" -s h -l help -d 'Print help'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "catalogue" -d 'List every operation this build offers'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "contract" -d 'Check a control plane\'s contract against a node\'s catalogue'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "job" -d 'Submit, show or wait for jobs on a node'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "install" -d 'Install or converge this server (or a sysroot) as a node; run it again at will'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "status" -d 'What is installed, what drifted, units, certificate, and the runner\'s last pass'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "tls" -d 'The node\'s TLS key: rotate it in two steps, prepare then confirm'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "cloudlinux" -d 'CloudLinux\'s panel-integration scripts (integration.ini), answered from state.db'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "fleet" -d 'The fleet: create it, mint join tokens, list and assign nodes, submit over the broker, follow its events, drain or remove a node, rescue this one'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "join" -d 'Join a fleet with a one-time token (`layerone fleet token`)'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "mcp" -d 'Serve this node\'s operations as MCP tools on stdio, for an operator\'s MCP client, through the API\'s local socket'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "completions" -d 'Print the completion script of a shell (bash, zsh or fish) on standard output'
complete -c layerone -n "__fish_layerone_using_subcommand help; and not __fish_seen_subcommand_from catalogue contract job install status tls cloudlinux fleet join mcp completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from contract" -f -a "check" -d 'Check a control plane\'s contract (what it sends, what it reads) against a node\'s catalogue; print the JSON report and exit 1 if anything it depends on is not given'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "submit" -d 'Submit a job. The envelope is JSON: an argument, `-` for stdin, or --file. A missing request_id is generated'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "show" -d 'Show one job'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from job" -f -a "wait" -d 'Wait until a job succeeds, fails or is superseded'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from tls" -f -a "rotate-key" -d 'Prepare a new key and certificate beside the served pair and print the new pin (the API keeps serving the old key); with --confirm, switch to the prepared key and restart the API'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "init" -d 'Create the fleet on this host: its CA, the broker\'s configuration and unit, the streams and buckets, the catalogue; register this node; print a join token. Run again, it changes nothing and never makes another CA'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "serve" -d 'Run the fleet\'s service beside the broker: joins, the broker\'s configuration, node liveness, dead letters'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "token" -d 'Mint a one-time join token for a node'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "nodes" -d 'Every node: state (up, down, lost, maintenance, draining, incompatible), last seen, assignment, what it reports'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "assign" -d 'Set a node\'s modules (core is always assigned)'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "submit" -d 'Submit a request to a node over the broker'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "events" -d 'Print the events stream as JSON lines; with --follow, keep printing'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "drain" -d 'No new work for a node; its queued work waits'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "maintenance" -d 'Maintenance: like drain, without leaving'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "activate" -d 'Back to taking work'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "remove" -d 'Remove a node: its credential is revoked at once'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "rescue" -d 'Bring a cut-off node back, keeping its identity, queued work and unpublished events: other brokers, or a fresh token'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "ca" -d 'Rotate the fleet\'s CA while the fleet runs (on the host of the administrative directory, beside the broker): `rotate`, then `finish` once every node trusts the new CA'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "operator" -d 'Operators\' credentials (an operator session\'s reach into the fleet), on the host of the administrative directory: `add`, `remove`, `list`'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "reference" -d 'Print the reference part of docs/fleet.md: every subject, stream, bucket, permission and message schema, generated from the protocol\'s declarations'
complete -c layerone -n "__fish_layerone_using_subcommand help; and __fish_seen_subcommand_from fleet" -f -a "status" -d 'This node\'s fleet link: joined or not, connected or cut off since when, events waiting'
