#!/usr/bin/env python3
"""The qualification run: one tenant's whole life on a real node, checked with the real daemons.

Runs inside a disposable real node (`scripts/real-node`, started by `scripts/qualify`): systemd
is PID 1 there, the network is loopback only, and the machine's packages are seen through an
overlay. It installs the built package, runs `layerone install`, lets the installed units run
the real runner, and then acts only as a control plane would: over the HTTPS API, with the
API key and the certificate pin `layerone install` printed. Each step says what it checked;
the first check that fails stops the run with a non-zero exit.

Nothing here talks to the node's store or calls its code: what is checked is what the
daemons do (Apache and PHP-FPM serving a page, MariaDB holding a row, Postfix, Dovecot and
OpenDKIM moving and signing mail, pure-ftpd storing an upload, cron running a task, the
kernel refusing a write past a quota and hiding one tenant's processes from another, and
holding one tenant's fork bomb, CPU spin and IO storm at its slice's limits while another
tenant's page answers).

    qualify.py run DEB          the whole run
    qualify.py bench DEB        the figures of docs/benchmarks.md ("real node")
"""

import base64
import hashlib
import http.client
import imaplib
import json
import os
import pathlib
import grp
import pwd
import re
import secrets
import shutil
import smtplib
import socket
import sqlite3
import ssl
import stat
import subprocess
import sys
import threading
import time
import ftplib
import email
import email.message
import email.utils

NODE_NAME = "node1.example.test"
SHOP = "shop.example.test"
SHOP_ALIAS = "www.shop.example.test"
# The tenant's mail host name: an alias of its web domain, so its certificate covers it.
SHOP_MAIL = "mail.shop.example.test"
OTHER = "other.example.test"
ORPHAN = "orphan.example.test"
SINK_DOMAIN = "sink.example.test"
SINK_PORT = 2525
API_DIRECT = ("127.0.0.1", 8443)
WORK = pathlib.Path("/var/lib/layerone-qualify")

started = time.monotonic()


# ----------------------------------------------------------------------------------------
# Saying what was checked


class Failed(Exception):
    pass


def step(title):
    print(f"\n== [{time.monotonic() - started:6.1f}s] {title}", flush=True)


def ok(what):
    print(f"   ok  {what}", flush=True)


def check(cond, what, detail=""):
    if not cond:
        raise Failed(f"{what}{': ' + str(detail) if detail else ''}")
    ok(what)


def wait_until(what, probe, timeout=30.0, interval=0.2):
    """Calls `probe` until it returns a true value, at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = probe()
            if value:
                return value
        except Exception as e:  # noqa: BLE001 - the probe's failure is reported below
            last = e
        if time.monotonic() > deadline:
            raise Failed(f"{what}: not within {timeout:.0f} s (last: {last!r})")
        time.sleep(interval)


def sh(*argv, check_rc=True, user=None, input_text=None, timeout=120):
    """Runs a program (no shell), returns its stdout; as `user` through runuser."""
    if user is not None:
        argv = ("runuser", "-u", user, "--") + argv
    p = subprocess.run(argv, capture_output=True, text=True, input=input_text, timeout=timeout)
    if check_rc and p.returncode != 0:
        raise Failed(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[:2000]}")
    return p.stdout if check_rc else p


def hexid(n, byte):
    return f"{byte:02x}{n:02x}".ljust(32, "0")[:30] + f"{n:02x}"


def sha512_crypt(password):
    # On standard input: a random password may begin with "-", which openssl would read as
    # an option.
    return sh("openssl", "passwd", "-6", "-stdin", input_text=password + "\n").strip()


def mysql_native_hash(password):
    inner = hashlib.sha1(password.encode()).digest()
    return "*" + hashlib.sha1(inner).hexdigest().upper()


# ----------------------------------------------------------------------------------------
# The control plane: the HTTPS API with a pinned certificate and the bearer key


class ControlPlane:
    def __init__(self, key, pin, address=API_DIRECT, server_name=None):
        self.key = key
        self.pin = pin
        self.address = address
        self.server_name = server_name
        self.counter = 0

    def _connection(self):
        ctx = ssl.create_default_context()
        # The pin is the trust: the node's certificate is self-signed until ACME replaces it.
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        # The node's name resolves to 127.0.0.1 (the node's /etc/hosts): SNI and Host carry it.
        host = self.server_name or self.address[0]
        conn = http.client.HTTPSConnection(host, self.address[1], context=ctx, timeout=60)
        conn.connect()
        der = conn.sock.getpeercert(binary_form=True)
        seen = hashlib.sha256(der).hexdigest()
        if seen != self.pin:
            raise Failed(f"the API's certificate {seen} is not the pinned {self.pin}")
        return conn

    def request(self, method, path, body=None):
        conn = self._connection()
        headers = {"Authorization": f"Bearer {self.key}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, raw.decode(errors="replace")

    def submit(self, operation, resource):
        self.counter += 1
        rid = secrets.token_hex(16)
        status, body = self.request(
            "POST", "/v1/jobs", {"request_id": rid, "operation": operation, "resource": resource}
        )
        if status != 202:
            raise Failed(f"{operation}: {status} {body}")
        return rid

    def job(self, rid):
        status, body = self.request("GET", f"/v1/jobs/{rid}")
        if status != 200:
            raise Failed(f"GET /v1/jobs/{rid}: {status} {body}")
        return body

    def wait(self, rid, timeout=120):
        def done():
            view = self.job(rid)
            return view if view["state"] in ("succeeded", "failed") else None

        return wait_until(f"job {rid}", done, timeout=timeout, interval=0.05)

    def run(self, operation, resource, expect="succeeded"):
        view = self.wait(self.submit(operation, resource))
        if view["state"] != expect:
            raise Failed(f"{operation} {view['state']}: {json.dumps(view.get('error'))}")
        return view.get("result") if expect == "succeeded" else view.get("error")

    def run_all(self, ops):
        """Submits every (operation, resource) at once, then waits for all: one batch."""
        rids = [(op, self.submit(op, res)) for op, res in ops]
        results = []
        for op, rid in rids:
            view = self.wait(rid)
            if view["state"] != "succeeded":
                raise Failed(f"{op} {view['state']}: {json.dumps(view.get('error'))}")
            results.append(view.get("result"))
        return results

    def put_blob(self, data):
        sha = hashlib.sha256(data).hexdigest()
        conn = self._connection()
        conn.request(
            "PUT",
            f"/v1/blobs/{sha}",
            body=data,
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/octet-stream"},
        )
        resp = conn.getresponse()
        resp.read()
        if resp.status not in (200, 201, 204):
            raise Failed(f"PUT blob: {resp.status}")
        return sha

    def get_blob(self, sha):
        conn = self._connection()
        conn.request("GET", f"/v1/blobs/{sha}", headers={"Authorization": f"Bearer {self.key}"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise Failed(f"GET blob: {resp.status}")
        check(hashlib.sha256(data).hexdigest() == sha, f"blob {sha[:12]}… has its hash")
        return data


# ----------------------------------------------------------------------------------------
# HTTP probes of the tenants' sites, through the real Apache on 127.0.0.1


def http_get(host, path, port=80, tls=False, fingerprint=None):
    """(status, headers, body) of one request to 127.0.0.1 for `host`; never follows."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock = raw
    seen = None
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        sock = ctx.wrap_socket(raw, server_hostname=host)
        seen = hashlib.sha256(sock.getpeercert(binary_form=True)).hexdigest()
        if fingerprint is not None and seen != fingerprint:
            raise Failed(f"https://{host} serves {seen}, not {fingerprint}")
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        body = out
    return status, headers, body.decode(errors="replace")


# ----------------------------------------------------------------------------------------
# Mail leaving the node: a local SMTP sink (Postfix relays everything not local to it)


class Sink:
    """A minimal SMTP server on 127.0.0.1:SINK_PORT keeping every message it is given."""

    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", SINK_PORT))
        self.server.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            conn, _ = self.server.accept()
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn):
        f = conn.makefile("rwb")

        def say(line):
            f.write(line.encode() + b"\r\n")
            f.flush()

        say("220 sink ESMTP")
        rcpts, sender = [], None
        while True:
            line = f.readline()
            if not line:
                break
            cmd = line.decode(errors="replace").strip()
            verb = cmd.split(" ", 1)[0].upper()
            if verb in ("EHLO", "HELO"):
                say("250-sink")
                say("250 8BITMIME")
            elif verb == "MAIL":
                sender, rcpts = cmd[10:].strip(), []
                say("250 ok")
            elif verb == "RCPT":
                rcpts.append(cmd[8:].strip().strip("<>").split(">")[0])
                say("250 ok")
            elif verb == "DATA":
                say("354 go on")
                body = b""
                while True:
                    l = f.readline()
                    if l in (b".\r\n", b".\n", b""):
                        break
                    if l.startswith(b".."):
                        l = l[1:]
                    body += l
                with self.lock:
                    self.messages.append({"from": sender, "rcpts": rcpts, "data": body})
                say("250 kept")
            elif verb == "QUIT":
                say("221 bye")
                break
            else:
                say("250 ok")
        conn.close()

    def wait_for(self, what, match, timeout=60):
        def find():
            with self.lock:
                for m in self.messages:
                    if match(m):
                        return m
            return None

        return wait_until(what, find, timeout=timeout)


def send(port, sender, rcpt, subject, body="hello", login=None, headers=None):
    msg = email.message.EmailMessage()
    msg["From"] = sender
    msg["To"] = rcpt
    msg["Subject"] = subject
    msg["Date"] = email.utils.formatdate()
    msg["Message-ID"] = email.utils.make_msgid(domain="sender.example.test")
    for k, v in (headers or {}).items():
        msg[k] = v
    msg.set_content(body)
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as s:
        s.ehlo("client.example.test")
        if login is not None:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            s.starttls(context=ctx)
            s.ehlo("client.example.test")
            s.login(*login)
        s.send_message(msg, from_addr=sender, to_addrs=[rcpt])


def imap_subjects(user, password):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with imaplib.IMAP4_SSL("127.0.0.1", 993, ssl_context=ctx) as m:
        m.login(user, password)
        m.select("INBOX")
        _, data = m.search(None, "ALL")
        subjects = []
        for num in data[0].split():
            _, parts = m.fetch(num, "(BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
            subjects.append(email.message_from_bytes(parts[0][1]).get("Subject", ""))
        return subjects


def imap_login_fails(user, password):
    try:
        imap_subjects(user, password)
        return False
    except imaplib.IMAP4.error:
        return True


def submission_login_fails(user, password):
    try:
        send(587, user, f"probe@{SINK_DOMAIN}", "login probe", login=(user, password))
        return False
    except smtplib.SMTPAuthenticationError:
        return True


def ftp_login(login, password):
    f = ftplib.FTP_TLS("127.0.0.1", timeout=30)
    f.context.check_hostname = False
    f.context.verify_mode = ssl.CERT_NONE
    f.login(login, password)
    f.prot_p()
    return f


def ftp_login_fails(login, password):
    try:
        ftp_login(login, password).quit()
        return False
    except ftplib.error_perm:
        return True


def dkim_verifies(message, record_name, record_value):
    import dkim  # dkimpy, pinned in scripts/qualify

    def dns(name, timeout=5):
        name = name.decode() if isinstance(name, bytes) else name
        if name.rstrip(".") == record_name:
            return record_value.encode()
        return None

    return dkim.verify(message, dnsfunc=dns)


# ----------------------------------------------------------------------------------------
# The node's side: install, units, what is left on disk


def has_line(path, line):
    return line in pathlib.Path(path).read_text().splitlines()


def unit_active(unit):
    return sh("systemctl", "is-active", unit, check_rc=False).stdout.strip() == "active"


def install_node(deb):
    step("install the package and run `layerone install`")
    names = " ".join((NODE_NAME, SHOP, SHOP_ALIAS, SHOP_MAIL, OTHER))
    with open("/etc/hosts", "a") as f:
        f.write(f"127.0.0.1 {names}\n")
    sh("dpkg", "-i", deb)
    check(os.access("/usr/bin/layerone", os.X_OK), "dpkg installed /usr/bin/layerone")
    out = sh("layerone", "install", "--name", NODE_NAME)
    print("\n".join("   | " + (l if not l.startswith("api key") else "api key    <redacted>") for l in out.splitlines()))
    fields = {}
    for line in out.splitlines():
        parts = line.split()
        # The certificate's own SHA-256 (`cert pin`), the pin form this client checks; the key
        # pin (`pin`, spki-sha256:) is the Rust client's.
        if line.startswith("cert pin "):
            fields["pin"] = parts[2]
        if line.startswith("api key "):
            fields["key"] = parts[2]
    check("pin" in fields and "key" in fields, "the installer printed the pin and the API key")
    # Mail leaving the node goes to the test's sink: the loopback network has no other MTA.
    with open("/etc/layerone/config.toml", "a") as f:
        f.write(f'\n[mail]\nrelayhost = "[127.0.0.1]:{SINK_PORT}"\n')
    out = sh("layerone", "install")
    check("relayhost" in pathlib.Path("/etc/postfix/main.cf").read_text(),
          f"with [mail] relayhost = [127.0.0.1]:{SINK_PORT} in config.toml, `layerone install` relays outbound mail there")
    return fields["key"], fields["pin"]


def main_units():
    return [
        "layerone-api.service",
        "layerone-runner.timer",
        "layerone-runner.path",
        "layerone-renew.timer",
        "apache2.service",
        "php8.2-fpm.service",
        "mariadb.service",
        "postfix.service",
        "dovecot.service",
        "opendkim.service",
        "pure-ftpd.service",
        "cron.service",
    ]


# ----------------------------------------------------------------------------------------
# The run


INFO_PHP = """<?php
header('Content-Type: application/json');
$out = ['uid' => posix_geteuid(), 'sapi' => php_sapi_name(),
        'memory_limit' => ini_get('memory_limit'), 'max_input_vars' => ini_get('max_input_vars')];
if (isset($_GET['db'])) {
    $c = json_decode(file_get_contents(__DIR__ . '/../db.json'), true);
    $db = new mysqli('localhost', $c['user'], $c['password'], $c['database']);
    if ($_GET['db'] === 'write') {
        $db->query('CREATE TABLE IF NOT EXISTS notes (v VARCHAR(64))');
        $db->query("INSERT INTO notes VALUES ('" . $db->real_escape_string($_GET['v']) . "')");
    }
    $out['rows'] = array_column($db->query('SELECT v FROM notes')->fetch_all(), 0);
}
echo json_encode($out);
"""

CRON_PHP = """<?php
file_put_contents(__DIR__ . '/../cron.out', posix_geteuid() . "\\n", FILE_APPEND);
file_put_contents(__DIR__ . '/../cron.cgroup', file_get_contents('/proc/self/cgroup'));
"""

# What a tenant's PHP sees of the machine's processes (`ps` reads /proc; open_basedir keeps
# PHP itself out of it).
PS_PHP = """<?php
header('Content-Type: text/plain');
echo shell_exec('/usr/bin/ps -eo user:32,pid,args');
"""

SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGn4w0x3qmW1b4PQ1b1pDpDkHc3uqm3n8dHTV1G4ZvDN ops@example"


def put_file(path, text, owner):
    path = pathlib.Path(path)
    path.write_text(text)
    user = pwd.getpwnam(owner)
    os.chown(path, user.pw_uid, user.pw_gid)
    path.chmod(0o640)


class Tenant:
    """The ids, names and secrets of one tenant, as a control plane keeps them."""

    def __init__(self, username, domain, alias=None, quota_mib=0, mail_alias=None):
        self.username = username
        self.domain = domain
        self.alias = alias
        self.mail_alias = mail_alias
        self.quota_mib = quota_mib
        self.ids = {k: secrets.token_hex(16) for k in (
            "account", "ssh_key", "web", "db", "db_user", "grant", "mail_domain", "mailbox",
            "dkim", "forwarder", "autoresponder", "ftp", "task", "certificate", "backup",
            "restore", "https")}
        self.mail_password = secrets.token_urlsafe(12)
        self.db_password = secrets.token_urlsafe(12)
        self.ftp_password = secrets.token_urlsafe(12)
        self.mailbox = f"info@{domain}"

    @property
    def home(self):
        return pathlib.Path("/home") / self.username

    @property
    def site_dir(self):
        return self.home / "web" / self.domain

    @property
    def docroot(self):
        return self.site_dir / "public_html"

    def account(self):
        return ("ensure_account", {"id": self.ids["account"], "username": self.username,
                                   "shell": "bash", "disk_quota_mib": self.quota_mib,
                                   "inode_quota": 0})

    def web(self):
        return ("ensure_web_domain", {"id": self.ids["web"], "account": self.ids["account"],
                                      "domain": self.domain,
                                      "aliases": [a for a in (self.alias, self.mail_alias) if a],
                                      "docroot": None})

    def php(self):
        return ("set_php_version", {"id": self.ids["web"], "account": self.ids["account"],
                                    "version": "8.2"})

    def database(self):
        return [
            ("ensure_mysql_database", {"id": self.ids["db"], "account": self.ids["account"],
                                       "name": "shop", "charset": "utf8mb4",
                                       "collation": "utf8mb4_unicode_ci"}),
            ("ensure_mysql_user", {"id": self.ids["db_user"], "account": self.ids["account"],
                                   "name": "app", "hosts": ["localhost"],
                                   "password_hash": mysql_native_hash(self.db_password)}),
            ("ensure_mysql_grant", {"id": self.ids["grant"], "account": self.ids["account"],
                                    "database": self.ids["db"], "user": self.ids["db_user"],
                                    "privileges": "all"}),
        ]

    def mail(self):
        return [
            ("ensure_mail_domain", {"id": self.ids["mail_domain"], "account": self.ids["account"],
                                    "domain": self.domain}),
            ("ensure_mailbox", {"id": self.ids["mailbox"], "account": self.ids["account"],
                                "domain": self.domain, "local_part": "info",
                                "password": sha512_crypt(self.mail_password), "quota_mib": 64}),
            ("ensure_dkim_key", {"id": self.ids["dkim"], "account": self.ids["account"],
                                 "domain": self.domain, "selector": "mail2026",
                                 "bits": "rsa2048"}),
        ]


def qualify(deb):
    key, pin = install_node(deb)
    api = ControlPlane(key, pin)

    step("the units run under systemd")
    for unit in main_units():
        wait_until(f"{unit} active", lambda: unit_active(unit), timeout=60)
        ok(f"{unit} is active")
    out = sh("layerone", "install", "--check")
    check("nothing to change" in out, "`layerone install --check` after install: nothing to change", out)

    step("the control plane reaches the API directly and through Apache's vhost for the node")
    status, body = api.request("GET", "/v1/health")
    check(status == 200, f"GET https://127.0.0.1:8443/v1/health answers 200 with the pinned certificate", body)
    via_apache = ControlPlane(key, pin, address=("127.0.0.1", 443), server_name=NODE_NAME)
    status, body = via_apache.request("GET", "/v1/health")
    check(status == 200, f"GET https://{NODE_NAME}/v1/health through Apache answers 200", body)
    status, body = via_apache.request("GET", "/v1/catalogue")
    check(status == 200 and len(body["operations"]) >= 70, "the catalogue through Apache, with the key")

    sink = Sink()

    step("another tenant, created first, is served")
    other = Tenant("other1", OTHER)
    api.run_all([other.account(), other.web()] + other.mail()[:2])
    put_file(other.docroot / "index.html", "other tenant\n", other.username)
    status, _, body = http_get(OTHER, "/")
    check(status == 200 and "other tenant" in body, f"http://{OTHER}/ answers the other tenant's page")

    shop = Tenant("shop1", SHOP, SHOP_ALIAS, quota_mib=64, mail_alias=SHOP_MAIL)
    step("account, SSH key, web domain with an alias")
    result = api.run(*shop.account())
    uid = result["uid"]
    check(pwd.getpwnam("shop1").pw_uid == uid, f"user shop1 exists with uid {uid}")
    api.run("ensure_ssh_key", {"id": shop.ids["ssh_key"], "account": shop.ids["account"], "key": SSH_KEY})
    keys = (shop.home / ".ssh" / "authorized_keys").read_text()
    check(SSH_KEY.split()[1] in keys, "the SSH key is in ~shop1/.ssh/authorized_keys")
    api.run(*shop.web())
    put_file(shop.docroot / "index.html", "shop home\n", shop.username)
    for name in (SHOP, SHOP_ALIAS):
        status, _, body = http_get(name, "/")
        check(status == 200 and "shop home" in body, f"Apache answers http://{name}/ from the tenant's document root")

    step("cron: a scheduled task of the tenant (checked later)")
    put_file(shop.docroot / "cron.php", CRON_PHP, shop.username)
    api.run("ensure_scheduled_task", {
        "id": shop.ids["task"], "account": shop.ids["account"], "schedule": "* * * * *",
        "task": {"php_script": {"path": f"web/{SHOP}/public_html/cron.php", "php_version": "8.2"}}})
    cron_created = time.monotonic()
    check("cron.php" in sh("crontab", "-l", "-u", shop.username), "the task is in shop1's crontab")

    step("PHP 8.2 through the tenant's own FPM pool")
    result = api.run(*shop.php())
    check(any(p["version"] == "8.2" for p in result["pools"]), "the result lists the 8.2 pool")
    api.run("set_php_options", {"id": shop.ids["account"], "options": {
        "display_errors": False, "max_execution_time_s": 30, "max_input_time_s": 60,
        "max_input_vars": 2345, "memory_limit_mib": 192, "post_max_size_mib": 32,
        "upload_max_filesize_mib": 16}})
    put_file(shop.docroot / "info.php", INFO_PHP, shop.username)
    status, _, body = http_get(SHOP, "/info.php")
    check(status == 200, "http://shop/info.php answers 200", body[:300])
    info = json.loads(body)
    check(info["sapi"] == "fpm-fcgi", "the page runs under PHP-FPM")
    check(info["uid"] == uid, f"the page runs as the tenant's uid {uid}")
    check(info["memory_limit"] == "192M" and info["max_input_vars"] == "2345",
          "the page sees the PHP options the node set (memory_limit 192M, max_input_vars 2345)", info)

    processes_step(shop, other)
    tenant_masters_step(api, shop, other)
    orphaned_pool_step(api, shop, other)

    step("MariaDB: database, user, grant; the page writes a row")
    db, user, _ = api.run_all(shop.database())
    put_file(shop.site_dir / "db.json", json.dumps(
        {"user": user["name"], "password": shop.db_password, "database": db["name"]}), shop.username)
    status, _, body = http_get(SHOP, "/info.php?db=write&v=first-row")
    check(status == 200 and json.loads(body).get("rows") == ["first-row"],
          f"the page connected as {user['name']} to {db['name']} and wrote a row", body[:300])

    step("mail: domain, mailbox, DKIM key, forwarder, autoresponder")
    _, mailbox, dkim = api.run_all(shop.mail())
    record = dkim["dkim"]
    check(record["name"] == f"mail2026._domainkey.{SHOP}", f"the DKIM record to publish: {record['name']}")
    api.run("set_mail_sending_gate", {"id": shop.ids["mail_domain"], "account": shop.ids["account"], "open": True})
    ok("the sending gate opened (as a control plane does once SPF, DKIM and DMARC are published)")
    forward_to = f"owner@{SINK_DOMAIN}"
    api.run("ensure_mail_forwarder", {"id": shop.ids["forwarder"], "account": shop.ids["account"],
                                      "address": f"sales@{SHOP}", "destinations": [forward_to]})
    subject = f"inbound {secrets.token_hex(4)}"
    send(25, f"customer@{SINK_DOMAIN}", shop.mailbox, subject)
    wait_until("the message in the mailbox over IMAP",
               lambda: subject in imap_subjects(shop.mailbox, shop.mail_password), timeout=60)
    ok("SMTP on 25 to the mailbox → Postfix → Dovecot LMTP → Maildir, fetched over IMAPS with the mailbox's password")
    maildir = pathlib.Path("/var/vmail") / SHOP / "info" / "Maildir"
    check(maildir.is_dir(), f"the Maildir is {maildir}")

    subject = f"outbound {secrets.token_hex(4)}"
    send(587, shop.mailbox, f"friend@{SINK_DOMAIN}", subject, login=(shop.mailbox, shop.mail_password))
    signed = sink.wait_for("the submitted message at the sink",
                           lambda m: subject.encode() in m["data"])
    check(b"DKIM-Signature:" in signed["data"], "the message submitted on 587 with SASL left the node DKIM-signed")
    check(dkim_verifies(signed["data"], record["name"], record["value"]),
          "its signature verifies against the DNS record the node reported")

    subject = f"forward {secrets.token_hex(4)}"
    send(25, f"customer@{SINK_DOMAIN}", f"sales@{SHOP}", subject)
    sink.wait_for("the forwarded message", lambda m: subject.encode() in m["data"] and forward_to in m["rcpts"])
    ok(f"mail to sales@{SHOP} was forwarded to {forward_to}")

    today = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))
    until = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 30 * 86400))
    api.run("ensure_autoresponder", {"id": shop.ids["autoresponder"], "account": shop.ids["account"],
                                     "mailbox": shop.ids["mailbox"], "subject": "Away",
                                     "body": "I am away.", "days": 1, "from": today, "until": until})
    asker = f"asker-{secrets.token_hex(3)}@{SINK_DOMAIN}"
    send(25, asker, shop.mailbox, "are you there?")
    sink.wait_for("the autoresponder's answer", lambda m: asker in m["rcpts"] and b"Away" in m["data"])
    ok("the autoresponder answered the sender")

    step("FTP: the tenant's login uploads a file")
    api.run("ensure_ftp_account", {"id": shop.ids["ftp"], "account": shop.ids["account"],
                                   "login": "shop1.upload", "password_hash": sha512_crypt(shop.ftp_password),
                                   "directory": f"web/{SHOP}"})
    f = ftp_login("shop1.upload", shop.ftp_password)
    import io
    f.storbinary("STOR uploaded.txt", io.BytesIO(b"uploaded over FTP\n"))
    f.quit()
    landed = shop.site_dir / "uploaded.txt"
    check(landed.read_text() == "uploaded over FTP\n", f"the upload landed in {landed}")
    check(landed.stat().st_uid == uid, "owned by the tenant")

    step("cron ran the tenant's task")
    out_file = shop.site_dir / "cron.out"
    wait_until("cron.out written", lambda: out_file.exists(), timeout=max(5, 75 - (time.monotonic() - cron_created)))
    check(out_file.read_text().split()[0] == str(uid), f"cron ran the task as uid {uid}")
    check(out_file.stat().st_uid == uid, "its output file is the tenant's")
    cgroup = (shop.site_dir / "cron.cgroup").read_text()
    print("\n".join(f"   | {l}" for l in cgroup.splitlines()))
    check(f"/user.slice/user-{uid}.slice/" in cgroup,
          f"the job ran in user-{uid}.slice (cron's PAM stack has pam_systemd), under the account's limits",
          cgroup)
    check(has_line("/etc/pam.d/cron", "session    optional   pam_systemd.so"),
          "`layerone install` added pam_systemd to /etc/pam.d/cron")

    certificate_step(api, shop)
    quota_step(api, shop)
    limits_step(api, shop)
    neighbours_step(api, shop, other)
    backup_step(api, shop)
    suspend_step(api, shop)
    removal_step(api, shop, other, sink)
    systemd_step()
    drift_step()
    proc_drift_step()
    watch_runner_step(api, other)


# Forcing HTTPS, and reading the quota's report (the families that do both).
HTTPS_OPERATION = "set_https_policy"


def https_request(t):
    return {"id": t.ids["web"], "account": t.ids["account"], "force_https": True,
            "hsts": {"max_age": 31536000, "include_subdomains": False}}


def quota_enforced(usage):
    return usage.get("quota", {}).get("enforced") is True


def start_pebble():
    """Pebble (the ACME CA) and its DNS responder on loopback, answering 127.0.0.1 for every
    name; its own HTTPS certificate from a throw-away CA made here."""
    d = WORK / "pebble"
    d.mkdir(parents=True, exist_ok=True)
    sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
       "-keyout", str(d / "ca.key"), "-out", str(d / "root.pem"), "-days", "2", "-subj", "/CN=pebble root")
    sh("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
       "-keyout", str(d / "key.pem"), "-out", str(d / "leaf.csr"), "-subj", "/CN=127.0.0.1")
    (d / "ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    sh("openssl", "x509", "-req", "-in", str(d / "leaf.csr"), "-CA", str(d / "root.pem"), "-CAkey",
       str(d / "ca.key"), "-CAcreateserial", "-out", str(d / "cert.pem"), "-days", "2", "-extfile", str(d / "ext"))
    (d / "pebble.json").write_text(json.dumps({"pebble": {
        "listenAddress": "127.0.0.1:14000", "managementListenAddress": "127.0.0.1:15000",
        "certificate": str(d / "cert.pem"), "privateKey": str(d / "key.pem"),
        "httpPort": 80, "tlsPort": 5001, "ocspResponderURL": "",
        "externalAccountBindingRequired": False}}))
    log = open(d / "log", "w")
    subprocess.Popen(["pebble-challtestsrv", "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
                      "-dns01", "127.0.0.1:8053", "-http01", "", "-https01", "", "-tlsalpn01", "",
                      "-management", "127.0.0.1:8055"], stdout=log, stderr=log)
    subprocess.Popen(["pebble", "-config", str(d / "pebble.json"), "-dnsserver", "127.0.0.1:8053"],
                     stdout=log, stderr=log, env={**os.environ, "PEBBLE_VA_NOSLEEP": "1",
                                                  "PEBBLE_WFE_NONCEREJECT": "0"})
    wait_until("pebble listening", lambda: socket.create_connection(("127.0.0.1", 14000), 1), timeout=20)
    return "https://127.0.0.1:14000/dir", d / "root.pem"


def certificate_step(api, shop):
    step("certificates from pebble: the node's own, then the tenant's; force HTTPS")
    directory, root = start_pebble()
    with open("/etc/layerone/config.toml", "a") as f:
        f.write(f'\n[acme]\ndirectory = "{directory}"\nemail = "hostmaster@{NODE_NAME}"\nserver_root = "{root}"\n')
    out = sh("layerone", "install")
    new_pin = next((l.split()[2] for l in out.splitlines() if l.startswith("cert pin ")), None)
    check(new_pin and new_pin != api.pin, "`layerone install` with [acme] took a certificate from pebble: a new pin", out)
    api.pin = new_pin
    wait_until("the API serving the new certificate", lambda: api.request("GET", "/v1/health")[0] == 200, timeout=30)
    ok("the API serves pebble's certificate (pinned)")
    listeners_follow_step(api)

    cert = api.run("ensure_certificate", {"id": shop.ids["certificate"], "account": shop.ids["account"],
                                          "web_domain": shop.ids["web"], "source": "acme", "blob": None})
    check(set(cert["covered"]) >= {SHOP, SHOP_ALIAS}, "the certificate covers the domain and its alias", cert)
    fingerprint = cert["fingerprint_sha256"].replace(":", "").lower()
    for name in (SHOP, SHOP_ALIAS):
        status, _, body = http_get(name, "/", port=443, tls=True, fingerprint=fingerprint)
        check(status == 200 and "shop home" in body, f"https://{name}/ answers with the issued certificate")
    # The certificate covers the tenant's mail host name: IMAPS and submission serve it by SNI.
    check(SHOP_MAIL in cert["covered"], f"the certificate covers {SHOP_MAIL}", cert)
    seen = {port: served_fingerprint(port, starttls, server_name=SHOP_MAIL)
            for port, starttls in ((993, None), (995, None), (587, "smtp"))}
    check(all(f == fingerprint for f in seen.values()),
          f"993, 995 and 587 present the tenant's certificate for {SHOP_MAIL} (openssl s_client -servername)",
          seen)
    node_seen = {port: served_fingerprint(port, starttls) for port, starttls in ((993, None), (587, "smtp"))}
    check(all(f == file_fingerprint() for f in node_seen.values()),
          f"and the node's own for {NODE_NAME}", node_seen)
    records = api.run("set_mail_sending_gate", {"id": shop.ids["mail_domain"], "account": shop.ids["account"],
                                                "open": True})
    check(records.get("mail_host") == SHOP_MAIL, f"the mail domain's host is {SHOP_MAIL} now", records)
    challenge = pathlib.Path("/var/lib/layerone/acme-challenge/.well-known/acme-challenge/qualify-probe")
    challenge.write_text("probe\n")
    challenge.chmod(0o644)
    api.run(HTTPS_OPERATION, https_request(shop))
    status, headers, _ = http_get(SHOP, "/some/page?x=1")
    check(status == 301 and headers.get("location") == f"https://{SHOP}/some/page?x=1",
          "force HTTPS: http:// answers 301 to the same URL over https", (status, headers.get("location")))
    status, _, body = http_get(SHOP, "/.well-known/acme-challenge/qualify-probe")
    check(status == 200 and body == "probe\n", "but not the ACME challenge path (200 over http)")
    status, headers, body = http_get(SHOP, "/", port=443, tls=True, fingerprint=fingerprint)
    check(status == 200 and "shop home" in body, "https:// answers 200, no redirect loop")
    check("max-age=" in headers.get("strict-transport-security", ""), "and sends HSTS as asked")
    challenge.unlink()
    tenant_listeners_follow_step(api, shop, fingerprint)


# The listeners of the tenant's certificate: its domain on 443, its mail host on 993, 995 and 587.
TENANT_LISTENERS = ((443, None, SHOP), (993, None, SHOP_MAIL), (995, None, SHOP_MAIL), (587, "smtp", SHOP_MAIL))


def check_tenant_listeners(want, what):
    seen = {port: served_fingerprint(port, starttls, server_name=name) for port, starttls, name in TENANT_LISTENERS}
    check(all(f == want for f in seen.values()),
          f"{what}: 443 ({SHOP}), 993, 995 and 587 ({SHOP_MAIL}) present sha256 {want[:16]}... (openssl s_client)", seen)


def tenant_listeners_follow_step(api, shop, issued):
    step("the tenant's certificate renewed: its listeners follow; Dovecot kept on the old one is restarted by the node")
    ref = {"id": shop.ids["certificate"], "account": shop.ids["account"]}
    renewed = api.run("renew_certificate", ref)["fingerprint_sha256"].replace(":", "").lower()
    check(renewed != issued, "renew_certificate put a new chain in place", renewed)
    check_tenant_listeners(renewed, "when the renewal job ends")
    # Dovecot's reload (`doveadm reload`) made a no-op for the runner: the node's own check after
    # the batch sees 993 on the old certificate and restarts dovecot.service.
    restarts = dovecot_restarts()
    # The pair in place now, kept to be served again below.
    key, crt = sni_files(SHOP_MAIL)
    shutil.copyfile(key, "/run/qualify-previous.key")
    shutil.copyfile(crt, "/run/qualify-previous.crt")
    sh("mount", "--bind", "/bin/true", "/usr/bin/doveadm")
    try:
        again = api.run("renew_certificate", ref)["fingerprint_sha256"].replace(":", "").lower()
    finally:
        sh("umount", "/usr/bin/doveadm")
    check(again != renewed, "a second renewal, Dovecot's reload doing nothing", again)
    check(dovecot_restarts() == restarts + 1, "the node found 993 on the old certificate and restarted "
          "dovecot.service once (its audit trail)", (restarts, dovecot_restarts()))
    check_tenant_listeners(again, "and the listeners present the renewed certificate")

    # Dovecot kept on the previous pair whatever restarts it (the previous files bind-mounted
    # over the certificate family's): the runner's drift check reports the stale listener.
    sh("mount", "--bind", "/run/qualify-previous.key", key)
    sh("mount", "--bind", "/run/qualify-previous.crt", crt)
    try:
        sh("systemctl", "restart", "dovecot.service")
        check(served_fingerprint(993, server_name=SHOP_MAIL) == renewed,
              "Dovecot made to serve the previous certificate on 993")
        stale = drift_events(api, shop, lambda e: "listener_certificate_stale" in json.dumps(e))
        check(stale, "the drift check reports the listener as listener_certificate_stale")
        ok(f"   {json.dumps(stale[0])[:300]}")
    finally:
        sh("umount", crt)
        sh("umount", key)
        sh("systemctl", "restart", "dovecot.service")
    check(served_fingerprint(993, server_name=SHOP_MAIL) == again, "Dovecot back on the renewed certificate")


def sni_files(name):
    """The key and chain Postfix's SNI table names for `name` (`name key chain`)."""
    for line in pathlib.Path("/etc/postfix/layerone/sni").read_text().splitlines():
        fields = line.split()
        if fields and fields[0] == name:
            return fields[1], fields[2]
    raise Failed(f"no SNI entry for {name}")


def dovecot_restarts():
    """How many `systemctl try-restart -- dovecot.service` the node's audit trail records."""
    return sum(1 for _, detail in audit_invocations() if "try-restart" in detail and "dovecot.service" in detail)


# Every listener of the node's certificate, and how TLS starts there (`openssl s_client -starttls`).
NODE_LISTENERS = ((443, None), (587, "smtp"), (25, "smtp"), (993, None), (995, None), (21, "ftp"))


def file_fingerprint(path="/etc/layerone/tls/cert.pem"):
    out = sh("openssl", "x509", "-in", path, "-noout", "-fingerprint", "-sha256")
    return out.strip().split("=", 1)[1].replace(":", "").lower()


def served_fingerprint(port, starttls=None, server_name=NODE_NAME):
    """The SHA-256 of the leaf certificate a listener presents, as `openssl s_client` sees it."""
    argv = ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", server_name]
    if starttls:
        argv += ["-starttls", starttls]
    p = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=20)
    x = subprocess.run(["openssl", "x509", "-noout", "-fingerprint", "-sha256"], input=p.stdout,
                       capture_output=True, timeout=20)
    if x.returncode != 0:
        return None
    return x.stdout.decode().strip().split("=", 1)[1].replace(":", "").lower()


def check_listeners(want, what):
    seen = {port: served_fingerprint(port, starttls) for port, starttls in NODE_LISTENERS}
    check(all(f == want for f in seen.values()),
          f"{what}: 443, 587, 25, 993, 995 and 21 all present sha256 {want[:16]}... (openssl s_client)", seen)


def listeners_follow_step(api):
    step("every listener follows the node's certificate; one kept on the old one is named and restarted")
    issued = file_fingerprint()
    check_listeners(issued, "pebble's certificate")
    # Dovecot's reload made a no-op, then a renewal: the certificate in place replaced by a
    # self-signed one for the same key and name, which `layerone install` renews at once.
    dropin = pathlib.Path("/run/systemd/system/dovecot.service.d/qualify-no-reload.conf")
    dropin.parent.mkdir(parents=True, exist_ok=True)
    dropin.write_text("[Service]\nExecReload=\nExecReload=/bin/true\n")
    sh("systemctl", "daemon-reload")
    sh("openssl", "req", "-x509", "-key", "/etc/layerone/tls/key.pem", "-subj", f"/CN={NODE_NAME}",
       "-addext", f"subjectAltName=DNS:{NODE_NAME}", "-days", "1", "-out", "/etc/layerone/tls/cert.pem")
    out = sh("layerone", "install", "--check")
    check("dovecot on port 993 presents certificate" in out and "request a certificate" in out,
          "`layerone install --check` names each listener on another certificate than the file's", out)
    out = sh("layerone", "status")
    check("dovecot on port 995 presents certificate" in out, "and so does `layerone status` (drift)", out)
    try:
        out = sh("layerone", "install")
    finally:
        dropin.unlink()
        sh("systemctl", "daemon-reload")
    renewed = file_fingerprint()
    check(renewed != issued, "`layerone install` renewed the certificate from pebble", out)
    check("dovecot on port 993 still presented certificate" in out and "dovecot.service was restarted" in out,
          "Dovecot, whose reload did nothing, is named and restarted", out)
    check_listeners(renewed, "the renewed certificate")
    new_pin = next((l.split()[2] for l in out.splitlines() if l.startswith("cert pin ")), None)
    api.pin = new_pin
    wait_until("the API serving the renewed certificate", lambda: api.request("GET", "/v1/health")[0] == 200,
               timeout=30)
    out = sh("layerone", "install", "--check")
    check("nothing to change" in out, "--check: nothing to change", out)


def quota_step(api, shop):
    step(f"quota: {shop.quota_mib} MiB on the tenant's home")
    big = shop.home / "big.bin"
    p = sh("dd", "if=/dev/zero", f"of={big}", "bs=1M", f"count={shop.quota_mib * 2}", "conv=fsync",
           user=shop.username, check_rc=False)
    refusal = next((l for l in p.stderr.splitlines() if "quota" in l.lower()), "")
    check(p.returncode != 0 and refusal, f"writing {shop.quota_mib * 2} MiB as the tenant fails: {refusal}")
    written = big.stat().st_size if big.exists() else 0
    check(written <= shop.quota_mib * 1024 * 1024, f"it stopped at {written // (1024 * 1024)} MiB")
    usage = api.run("observe_account_usage", {"id": shop.ids["account"]})
    print(f"   | observe_account_usage: {json.dumps(usage.get('quota'))} disk_bytes={usage.get('disk_bytes')}")
    check(quota_enforced(usage), "observe_account_usage reports the quota as enforced by the kernel", usage)
    check(usage["disk_bytes"] >= written, "and the bytes used", usage["disk_bytes"])
    big.unlink()

    step("a subvolume the tenant makes in its home, and a snapshot of its home, count against its quota")
    nested = shop.home / "a" / "nested"
    snapshot = shop.home / "snap"
    sh("mkdir", "-p", str(nested.parent), user=shop.username)
    sh("btrfs", "subvolume", "create", str(nested), user=shop.username)
    sh("btrfs", "subvolume", "snapshot", str(shop.home), str(snapshot), user=shop.username)
    # Any job of the account scans first: its new subvolumes join its qgroup.
    api.run("observe_account_usage", {"id": shop.ids["account"]})
    for where in (nested, snapshot):
        fill = where / "big.bin"
        p = sh("dd", "if=/dev/zero", f"of={fill}", "bs=1M", f"count={shop.quota_mib * 2}", "oflag=dsync",
               user=shop.username, check_rc=False)
        refusal = next((l for l in p.stderr.splitlines() if "quota" in l.lower()), "")
        written = fill.stat().st_size if fill.exists() else 0
        check(p.returncode != 0 and refusal and written <= shop.quota_mib * 1024 * 1024,
              f"writing {shop.quota_mib * 2} MiB into {where.relative_to(shop.home)} fails at "
              f"{written // (1024 * 1024)} MiB: {refusal}")
        usage = api.run("observe_account_usage", {"id": shop.ids["account"]})
        check(usage["quota"]["used_bytes"] >= written and usage["disk_bytes"] >= written,
              f"observe_account_usage counts it: quota used {usage['quota']['used_bytes']}, "
              f"disk_bytes {usage['disk_bytes']}, complete {usage['complete']}")
        fill.unlink()


def cgroup_controllers():
    """The controllers this node's kernel gives systemd, read independently of the node."""
    unified = pathlib.Path("/sys/fs/cgroup/cgroup.controllers")
    if unified.exists():
        names = set(unified.read_text().split())
        return {"cpu": "cpu" in names, "memory": "memory" in names, "pids": "pids" in names,
                "io": "io" in names}
    v1 = lambda name: (pathlib.Path("/sys/fs/cgroup") / name / "tasks").is_file()
    return {"cpu": v1("cpu"), "memory": v1("memory"), "pids": v1("pids"), "io": v1("blkio")}


def limits_step(api, shop):
    step("limits: the tenant's systemd slice, read back from systemd")
    uid = pwd.getpwnam(shop.username).pw_uid
    slice_unit = f"user-{uid}.slice"
    wanted = {"cpu_percent": 150, "memory_mib": 512, "io_kib_per_sec": 2048, "processes": 200,
              "entry_processes": 10}
    result = api.run("set_account_limits", {"id": shop.ids["account"], **wanted})
    check(result["limits"] == wanted, "set_account_limits reports the limits systemd holds", result)
    drop_in = pathlib.Path(f"/etc/systemd/system/{slice_unit}.d/50-layerone-limits.conf")
    check(drop_in.exists(), f"the node's drop-in of {slice_unit}", drop_in)
    shown = dict(l.split("=", 1) for l in sh(
        "systemctl", "show", "--property=TasksMax,MemoryMax,CPUQuotaPerSecUSec,IOWriteBandwidthMax",
        "--", slice_unit).splitlines() if "=" in l)
    print(f"   | systemctl show {slice_unit}: {shown}")
    check(shown.get("TasksMax") == "200" and shown.get("MemoryMax") == str(512 * 1024 * 1024)
          and shown.get("CPUQuotaPerSecUSec") == "1.500000s"
          and shown.get("IOWriteBandwidthMax") == f"{shop.home} {2048 * 1024}",
          "systemd itself shows them for the slice", shown)
    have = cgroup_controllers()
    enforced = {"cpu_percent": have["cpu"], "memory_mib": have["memory"],
                "io_kib_per_sec": have["io"], "processes": have["pids"], "entry_processes": True}
    check(result["enforced"] == enforced,
          f"`enforced` is what this host's cgroup controllers allow: {enforced}", result)
    usage = api.run("observe_account_usage", {"id": shop.ids["account"]})
    check(usage["limits_in_effect"] == wanted, "observe_account_usage reads them back", usage)
    counted = usage["slice"]
    print(f"   | observe_account_usage's slice: {counted}")
    cpu = sh("systemctl", "show", "-P", "CPUUsageNSec", "--", slice_unit).strip()
    if cpu.isdigit():
        check(counted["cpu_usage_nsec"] is not None and 0 < counted["cpu_usage_nsec"] <= int(cpu),
              f"and the CPU time systemd counts for the slice (CPUUsageNSec {cpu} a moment later)", counted)
    else:
        check(counted["cpu_usage_nsec"] is None,
              f"and no CPU time where systemd counts none for the slice (CPUUsageNSec={cpu})", counted)
    pool = pathlib.Path(f"/etc/php/8.2/fpm/layerone/{pwd.getpwnam(shop.username).pw_uid}.conf").read_text()
    check("pm.max_children = 10\n" in pool, "the tenant's PHP pool takes entry_processes as its children")
    # FTP sessions are pure-ftpd's, outside the slice: its own per-user fields bound them.
    shown = sh("pure-pw", "show", "shop1.upload", "-f", "/etc/pure-ftpd/pureftpd.passwd")
    print("\n".join(f"   | {l}" for l in shown.splitlines() if "bandwidth" in l or "sessions" in l))
    check("Download bandwidth : 2048 Kb (enabled)" in shown and "Upload   bandwidth : 2048 Kb (enabled)" in shown
          and "Max sim sessions   : 10 (enabled)" in shown,
          "pure-pw shows the FTP login's bandwidth (2,048 KiB/s each way) and its 10 sessions", shown)
    sessions = []
    try:
        for _ in range(10):
            sessions.append(ftp_login("shop1.upload", shop.ftp_password))
        ok(f"{len(sessions)} FTP sessions of shop1.upload at once")
        try:
            ftp_login("shop1.upload", shop.ftp_password).quit()
            refused = None
        except ftplib.all_errors as e:
            refused = e
        check(refused is not None, "pure-ftpd refuses an 11th", refused)
    finally:
        for f in sessions:
            f.close()


def backup_step(api, shop):
    step("backup, damage, restore")
    backup = api.run("create_account_backup", {"id": shop.ids["backup"], "account": shop.ids["account"]})
    check(backup["databases"], f"the backup holds the home ({backup['files']} files) and the databases {backup['databases']}")
    archive = api.get_blob(backup["blob"])
    (shop.docroot / "info.php").unlink()
    db = json.loads((shop.site_dir / "db.json").read_text())
    sh("mariadb", "-e", f"DELETE FROM `{db['database']}`.notes")
    status, _, _ = http_get(SHOP, "/info.php", port=443, tls=True)
    check(status == 404, "damaged: the page is gone (404) and the table emptied")
    blob = api.put_blob(archive)
    api.run("restore_account_backup", {"id": shop.ids["restore"], "account": shop.ids["account"], "blob": blob})
    status, _, body = http_get(SHOP, "/info.php?db=read", port=443, tls=True)
    check(status == 200 and json.loads(body).get("rows") == ["first-row"], "restored: the page and the row are back", body[:300])


def suspend_step(api, shop):
    step("suspend and unsuspend the tenant")
    api.run("suspend_account", {"id": shop.ids["account"]})
    status, _, _ = http_get(SHOP, "/", port=443, tls=True)
    check(status == 403, "the site answers 403", status)
    check(imap_login_fails(shop.mailbox, shop.mail_password), "IMAP login fails")
    check(submission_login_fails(shop.mailbox, shop.mail_password), "SMTP submission login fails")
    check(ftp_login_fails("shop1.upload", shop.ftp_password), "FTP login fails")
    api.run("unsuspend_account", {"id": shop.ids["account"]})
    status, _, body = http_get(SHOP, "/", port=443, tls=True)
    check(status == 200 and "shop home" in body, "unsuspended: the site answers again")
    check(not imap_login_fails(shop.mailbox, shop.mail_password), "IMAP login works again")
    check(not submission_login_fails(shop.mailbox, shop.mail_password), "SMTP submission login works again")
    check(not ftp_login_fails("shop1.upload", shop.ftp_password), "FTP login works again")


def grep_tree(root, needle):
    hits = []
    for base, _, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            try:
                if needle in pathlib.Path(path).read_bytes():
                    hits.append(path)
            except OSError:
                pass
    return hits


def removal_step(api, shop, other, sink):
    step("remove the account: nothing of it is left anywhere")
    shop_uid = pwd.getpwnam(shop.username).pw_uid
    db = json.loads((shop.site_dir / "db.json").read_text())
    # A process of the tenant that /proc hides even from the tenant (it made itself not
    # dumpable): the removal's kill, made as the tenant, must still find it.
    hidden = as_user(shop.username, "python3", "-c",
                     "import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); print('ready', flush=True); "
                     "time.sleep(600)", stdout=subprocess.PIPE)
    check(hidden.stdout.readline() == b"ready\n", f"{shop.username} runs a process that made itself not dumpable")
    check(str(hidden.pid) not in ps_pids(shop.username)
          and (shop.username, str(hidden.pid)) in [(u, p) for u, p, _ in ps_lines()],
          f"{shop.username}'s own ps does not list it (pid {hidden.pid}); root's does")
    api.run("remove_account", {"id": shop.ids["account"]})
    check(hidden.wait(timeout=10) == -9, "the removal killed it (SIGKILL) all the same")
    check(subprocess.run(["getent", "passwd", shop.username], capture_output=True).returncode == 2, "no user shop1")
    check(subprocess.run(["getent", "group", shop.username], capture_output=True).returncode == 2, "no group shop1")
    check(not shop.home.exists(), f"no {shop.home}")
    subvolumes = [l.split(" path ", 1)[1] for l in sh("btrfs", "subvolume", "list", "/home").splitlines()]
    check(not [s for s in subvolumes if s == shop.username or s.startswith(f"{shop.username}/")],
          "no subvolume of its home is left (the nested one and the snapshot deleted first)", subvolumes)
    for tree in ("/etc/apache2", "/etc/php", "/etc/postfix", "/etc/dovecot", "/etc/opendkim",
                 "/etc/pure-ftpd", "/var/spool/cron", "/etc/systemd/system"):
        hits = grep_tree(tree, SHOP.encode()) + grep_tree(tree, shop.username.encode())
        check(not hits, f"nothing in {tree} names the tenant", hits)
    check(not (pathlib.Path("/var/vmail") / SHOP).exists(), "no mail store")
    dbs = sh("mariadb", "-N", "-e", "SHOW DATABASES").split()
    check(db["database"] not in dbs, f"no database {db['database']}")
    users = sh("mariadb", "-N", "-e", "SELECT User FROM mysql.user").split()
    check(db["user"] not in users, f"no database user {db['user']}")
    check(not pathlib.Path(f"/var/spool/cron/crontabs/{shop.username}").exists(), "no crontab")
    check(ftp_login_fails("shop1.upload", shop.ftp_password), "no FTP login")
    fpm = f"php8.2-fpm@{shop_uid}.service"
    check(not unit_active(fpm) and sh("systemctl", "is-enabled", fpm, check_rc=False).stdout.strip() != "enabled",
          f"{fpm} stopped and not enabled")
    check(imap_login_fails(shop.mailbox, shop.mail_password), "no IMAP login")
    for unit in main_units():
        check(unit_active(unit), f"{unit} still runs")
    status, _, body = http_get(OTHER, "/")
    check(status == 200 and "other tenant" in body, "the other tenant's site is still served")
    subject = f"after removal {secrets.token_hex(4)}"
    send(25, f"customer@{SINK_DOMAIN}", other.mailbox, subject)
    wait_until("the other tenant's mail", lambda: subject in imap_subjects(other.mailbox, other.mail_password), timeout=60)
    ok("the other tenant's mailbox still receives mail")


def systemd_step():
    step("the hardened units under systemd")
    for unit in ("layerone-api.service", "layerone-runner.service", "layerone-runner-watch.service", "layerone-renew.service"):
        out = sh("systemd-analyze", "security", "--no-pager", unit, check_rc=False).stdout
        line = next((l for l in out.splitlines() if "Overall exposure level" in l), "")
        check(line, f"systemd-analyze security {unit}: {line.split(':', 1)[-1].strip()}")
    pid = sh("systemctl", "show", "-P", "MainPID", "layerone-api.service").strip()
    check(pid not in ("", "0"), f"layerone-api runs (pid {pid})")
    api_user = pwd.getpwnam("layerone-api")
    def write_as_api(path):
        return subprocess.run(["nsenter", "-t", pid, "-m", "-S", str(api_user.pw_uid), "-G", str(api_user.pw_gid),
                               "sh", "-c", f": > {path} && rm -f {path}"], capture_output=True, text=True)
    for path in ("/etc/layerone/x", "/usr/local/x", "/var/lib/layerone/state/x", "/root/x", "/home/x"):
        p = write_as_api(path)
        check(p.returncode != 0, f"in the API's namespace, its user cannot write {path}")
    inbox = next(pathlib.Path("/var/lib/layerone").glob("inbox*"), None)
    if inbox is not None and inbox.is_dir():
        p = write_as_api(f"{inbox}/qualify-probe")
        check(p.returncode == 0, f"but can write its ReadWritePaths ({inbox})", p.stderr)
    sock = pathlib.Path("/run/layerone/operators/api.sock")
    st = sock.stat() if sock.exists() else None
    group = grp.getgrgid(st.st_gid).gr_name if st else ""
    check(st is not None and stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o660
          and group == "layerone-operators",
          f"the local socket {sock} is mode 0660 in layerone-operators", f"{st} {group}")
    out = sh("curl", "-sS", "--unix-socket", str(sock), "http://localhost/v1/catalogue", check_rc=False)
    check('"operations"' in out.stdout, "root reads the catalogue on it without a key", out.stdout[:200])
    nobody = sh("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "curl", "-sS",
                "--unix-socket", str(sock), "http://localhost/v1/catalogue", check_rc=False)
    check(nobody.returncode != 0 and not nobody.stdout, "and nobody gets nothing from it", nobody.stderr)


# ----------------------------------------------------------------------------------------
# /proc: what one tenant sees of the others' processes


def as_user(user, *argv, stdout=subprocess.DEVNULL):
    """Starts `argv` as `user` (its uid, gid and groups) in place: no process of root's stays
    in between, so killing it kills the command."""
    return subprocess.Popen(["setpriv", "--reuid", user, "--regid", user, "--init-groups", *argv],
                            stdout=stdout, stderr=subprocess.DEVNULL)


def ps_lines(user=None):
    """`ps -eo user:32,pid,args` as root or as `user`: (user, pid, args) of each process."""
    out = sh("ps", "-eo", "user:32,pid,args", user=user)
    return [tuple(l.split(None, 2)) for l in out.splitlines()[1:] if l.strip()]


def ps_pids(user):
    return [pid for _, pid, _ in ps_lines(user)]


def proc_mount_options():
    """The options of the /proc this process sees (the last one mounted there)."""
    options = None
    for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines():
        mount, _, fs = line.partition(" - ")
        if mount.split()[4] == "/proc":
            options = fs.split()[2].split(",")
    return options


def proc_group_gid():
    return grp.getgrnam("layerone-proc").gr_gid


def hidden_proc(gid):
    options = proc_mount_options() or []
    return "hidepid=invisible" in options and f"gid={gid}" in options


def events_since(api, after, wanted=lambda e: True):
    """The events of the feed after the cursor `after` that `wanted` keeps, and the feed's end."""
    found = []
    for _ in range(50):
        status, page = api.request("GET", f"/v1/events?after={after}&limit=1000")
        check(status == 200, "the events feed answers", page)
        found += [e for e in page["events"] if wanted(e)]
        if page["next"] == after:
            break
        after = page["next"]
    return found, after


def drift_events(api, tenant, wanted, after=0):
    """The events of the feed after `after` that `wanted` keeps, after a drift check: the check
    runs when its marker is older than its period, made so, then a pass (a request of
    `tenant`'s). The check runs after the pass's jobs, so the request's result comes first:
    the feed is read until the check's findings are there (it records them in one commit)."""
    os.utime("/var/lib/layerone/state/observed", (0, 0))
    api.run("observe_account_usage", {"id": tenant.ids["account"]})
    found = []
    wait_until("the drift check's findings on the events feed",
               lambda: found.extend(events_since(api, after, wanted)[0]) or found)
    return found


def one_drift_finding(api, tenant, after, aspect, resource_id, what):
    """The drift check, run by a pass of `tenant`'s, reports exactly one finding since `after`:
    `aspect` of `resource_id`."""
    findings = drift_events(api, tenant, lambda e: e.get("kind") == "drift", after=after)
    print("\n".join(f"   | {json.dumps(e)[:300]}" for e in findings))
    check(len(findings) == 1 and findings[0]["drift"]["aspect"] == aspect
          and findings[0]["drift"]["resource_id"] == resource_id,
          f"the drift check reports one finding: {what} ({aspect})", findings)


def fpm_master(uid):
    """What systemd shows of the tenant's own PHP 8.2 master."""
    unit = f"php8.2-fpm@{uid}.service"
    return unit, dict(l.split("=", 1) for l in sh(
        "systemctl", "show", "--property=ActiveState,ControlGroup,MainPID", "--", unit).splitlines() if "=" in l)


def socket_pids(tenant):
    """The pids `ss` shows listening on the tenant's PHP 8.2 socket."""
    path = f"/run/php/layerone-{tenant.ids['account']}-php8.2.sock"
    line = next((l for l in sh("ss", "-xlpn").splitlines() if f" {path} " in l), "")
    return {int(p) for p in re.findall(r"pid=(\d+)", line)}


def tenant_masters_step(api, shop, other):
    step("each tenant's PHP is its own FPM master in its own slice; one tenant's broken pool stops only its own")
    api.run(*other.php())
    put_file(other.docroot / "info.php", INFO_PHP, other.username)
    shared_pid = int(sh("systemctl", "show", "-P", "MainPID", "php8.2-fpm.service").strip())
    masters = {}
    for tenant in (shop, other):
        uid = pwd.getpwnam(tenant.username).pw_uid
        unit, shown = fpm_master(uid)
        masters[tenant.username] = (uid, unit)
        check(shown.get("ActiveState") == "active"
              and shown.get("ControlGroup") == f"/user.slice/user-{uid}.slice/{unit}",
              f"{unit} runs {tenant.username}'s pool, in user-{uid}.slice", shown)
        pids = socket_pids(tenant)
        check(int(shown["MainPID"]) in pids and shared_pid not in pids,
              f"its master (pid {shown['MainPID']}) listens on the pool's socket, the shared master "
              f"(pid {shared_pid}) does not", pids)
        status, _, body = http_get(tenant.domain, "/info.php")
        check(status == 200 and json.loads(body)["uid"] == uid,
              f"http://{tenant.domain}/info.php answers as uid {uid} through it", body[:300])

    # A node from before tenant masters: other1's pool a section of the shared master, on the
    # same socket. The account's next request moves it to its own master.
    uid, unit = masters[other.username]
    own = pathlib.Path(f"/etc/php/8.2/fpm/layerone/{uid}.conf")
    section = own.read_text().split("[global]", 1)[1].split("\n[", 1)[1]
    old = pathlib.Path(f"/etc/php/8.2/fpm/pool.d/layerone-{other.ids['account']}.conf")
    sh("systemctl", "disable", "--now", unit)
    own.unlink()
    old.write_text("[" + section)
    sh("systemctl", "reload", "php8.2-fpm.service")
    wait_until("the shared master on other1's socket", lambda: shared_pid in socket_pids(other))
    status, _, body = http_get(OTHER, "/info.php")
    check(status == 200 and json.loads(body)["uid"] == uid,
          f"as an older node did: {old} in the shared master, which serves other1's PHP", body[:300])
    api.run("set_php_options", {"id": other.ids["account"], "options": {"max_input_vars": 1500}})
    check(not old.exists() and own.exists(), f"the account's next request moved it to {own}")
    _, shown = fpm_master(uid)
    check(shown.get("ActiveState") == "active" and socket_pids(other) and shared_pid not in socket_pids(other)
          and int(shown["MainPID"]) in socket_pids(other),
          f"{unit} runs it and holds the socket; the shared master let go", (shown, socket_pids(other)))
    status, _, body = http_get(OTHER, "/info.php")
    check(status == 200 and json.loads(body)["max_input_vars"] == "1500",
          "other1's PHP answers from its own master, with the new option", body[:300])

    uid, unit = masters[shop.username]
    config = pathlib.Path(f"/etc/php/8.2/fpm/layerone/{uid}.conf")
    good = config.read_text()
    _, before = events_since(api, 0)
    config.write_text(good + "this line is not FPM's\n")
    restart = sh("systemctl", "restart", unit, check_rc=False)
    check(restart.returncode != 0, f"with a garbage line in {config}, {unit} does not start")
    status, _, _ = http_get(SHOP, "/info.php")
    check(status >= 500, f"{shop.username}'s PHP is down ({status})")
    other_uid, _ = masters[other.username]
    for _ in range(3):
        status, _, body = http_get(OTHER, "/info.php")
        check(status == 200 and json.loads(body)["uid"] == other_uid,
              f"{other.username}'s PHP keeps answering", body[:300])
    one_drift_finding(api, shop, before, "php_pool_differs", shop.ids["account"], f"{shop.username}'s pool")
    api.run("set_php_options", {"id": shop.ids["account"], "options": {
        "display_errors": False, "max_execution_time_s": 30, "max_input_time_s": 60,
        "max_input_vars": 2345, "memory_limit_mib": 192, "post_max_size_mib": 32,
        "upload_max_filesize_mib": 16}})
    check(config.read_text() == good, "the next request of the account writes its configuration back")
    wait_until(f"{unit} active again", lambda: fpm_master(uid)[1].get("ActiveState") == "active")
    status, _, body = http_get(SHOP, "/info.php")
    check(status == 200 and json.loads(body)["uid"] == uid, f"{shop.username}'s PHP answers again", body[:300])


def orphaned_pool_step(api, shop, other):
    step("an orphaned pool (its user removed behind the node's back): one drift finding, every other tenant's PHP answers")
    orphan = Tenant("orphan1", ORPHAN)
    api.run_all([orphan.account(), orphan.web(), orphan.php()])
    put_file(orphan.docroot / "info.php", INFO_PHP, orphan.username)
    uid = pwd.getpwnam(orphan.username).pw_uid
    status, _, body = http_get(ORPHAN, "/info.php")
    check(status == 200 and json.loads(body)["uid"] == uid, f"{orphan.username}'s PHP answers as uid {uid}")
    _, before = events_since(api, 0)
    sh("pkill", "-KILL", "-u", str(uid), check_rc=False)
    sh("userdel", "--force", orphan.username)
    unit = f"php8.2-fpm@{uid}.service"
    # As at the node's next boot: the master starts again from its configuration.
    # FPM takes the pool's numeric uid without a passwd entry: the orphan's own PHP may well
    # go on; what is checked is the others' and the finding.
    restarted = sh("systemctl", "restart", unit, check_rc=False)
    _, shown = fpm_master(uid)
    status, _, _ = http_get(ORPHAN, "/info.php")
    ok(f"{unit} restarted (exit {restarted.returncode}): {shown.get('ActiveState')}; "
       f"http://{ORPHAN}/info.php answers {status}")
    for tenant in (shop, other):
        tenant_uid = pwd.getpwnam(tenant.username).pw_uid
        for _ in range(3):
            status, _, body = http_get(tenant.domain, "/info.php")
            check(status == 200 and json.loads(body)["uid"] == tenant_uid,
                  f"{tenant.username}'s PHP keeps answering", body[:300])
    # (The pass that runs the check is another tenant's: the orphan's own requests fail
    # account_missing now.)
    one_drift_finding(api, other, before, "user_missing", orphan.ids["account"], f"{orphan.username}'s user is missing")
    api.run("remove_account", {"id": orphan.ids["account"]})
    check(not pathlib.Path(f"/etc/php/8.2/fpm/layerone/{uid}.conf").exists()
          and fpm_master(uid)[1].get("ActiveState") != "active",
          f"removing the account takes its pool and stops {unit} (it was {shown.get('ActiveState')})")


def cgroup_dir(controller, *parts):
    """A cgroup's directory on this node: on the unified hierarchy when it has the controllers,
    else on `controller`'s v1 hierarchy."""
    root = pathlib.Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").exists():
        return root.joinpath(*parts)
    return root.joinpath(controller, *parts)


def keyed(text):
    """`name number` lines (cpu.stat, pids.events) as a dict."""
    return {f[0]: int(f[1]) for f in (l.split() for l in text.splitlines()) if len(f) >= 2 and f[1].isdigit()}


def attack_counters(uid, unit):
    """The kernel's counters that show a limit of `uid`'s slice held, read while `unit` runs in
    it: forks refused (pids.events), the slice's peak of tasks, its CPU periods throttled, the
    CPU time of the unit's processes (/proc/PID/stat), bytes written through the block throttle."""
    unified = pathlib.Path("/sys/fs/cgroup/cgroup.controllers").exists()
    of_slice = ("user.slice", f"user-{uid}.slice")
    cpu = keyed((cgroup_dir("cpu", *of_slice) / "cpu.stat").read_text())
    if unified:
        io = (cgroup_dir("io", *of_slice) / "io.stat").read_text()
        written = sum(int(f.split("=")[1]) for l in io.splitlines() for f in l.split()[1:] if f.startswith("wbytes="))
        throttled_ns = cpu.get("throttled_usec", 0) * 1000
        # Counted, hierarchically, from the cgroup whose limit refused the fork: the slice.
        refused = keyed((cgroup_dir("pids", *of_slice) / "pids.events").read_text()).get("max", 0)
    else:
        io = (cgroup_dir("blkio", *of_slice) / "blkio.throttle.io_service_bytes_recursive").read_text()
        written = sum(int(f[2]) for f in (l.split() for l in io.splitlines()) if len(f) == 3 and f[1] == "Write")
        throttled_ns = cpu.get("throttled_time", 0)
        # Counted in the forking task's cgroup on v1: the unit's.
        events = cgroup_dir("pids", *of_slice, unit) / "pids.events"
        refused = keyed(events.read_text()).get("max", 0) if events.exists() else 0
    procs = cgroup_dir("pids", *of_slice, unit) / "cgroup.procs"
    ticks = 0
    for pid in (procs.read_text().split() if procs.exists() else []):
        try:
            fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return {"forks_refused": refused,
            "pids_peak": int((cgroup_dir("pids", *of_slice) / "pids.peak").read_text()),
            "nr_periods": cpu.get("nr_periods", 0), "nr_throttled": cpu.get("nr_throttled", 0),
            "throttled_ns": throttled_ns, "unit_cpu_s": ticks / os.sysconf("SC_CLK_TCK"),
            "written_bytes": written}


def probe(host, seconds):
    """`layerone-bench probe`: one site's visitors' latency for `seconds` (JSON)."""
    return json.loads(sh("layerone-bench", "probe", host, "/info.php", str(seconds),
                         timeout=seconds + 60).strip().splitlines()[-1])


def audit_invocations(after=0):
    """The programs the node ran, as its audit trail records them after row `after`: (row, detail)."""
    db = sqlite3.connect("file:/var/lib/layerone/state/state.db?mode=ro", uri=True)
    try:
        return db.execute("SELECT rowid, detail FROM audit WHERE kind = 'invocation' AND rowid > ?",
                          (after,)).fetchall()
    finally:
        db.close()


def neighbours_step(api, shop, other):
    step("a neighbour stays up: one tenant's fork bomb, CPU spin and O_DIRECT IO storm stop at its own limits")
    have = cgroup_controllers()
    check(have["cpu"] and have["pids"] and have["io"],
          "the node's systemd has the cpu, pids and io (blkio) controllers", have)
    uid, gid = pwd.getpwnam(shop.username).pw_uid, pwd.getpwnam(shop.username).pw_gid
    limits = {"cpu_percent": 50, "memory_mib": 512, "io_kib_per_sec": 1024, "processes": 64,
              "entry_processes": 10}
    result = api.run("set_account_limits", {"id": shop.ids["account"], **limits})
    check(result["limits"] == limits, f"{shop.username}'s limits: {limits}", result)
    seconds = 8
    idle = probe(OTHER, 5)
    check(idle["failures"] == 0 and idle["requests"] > 0, f"{other.username}'s page, idle: {idle}", idle)
    figures = {"idle": idle}
    attacks = {
        # Each process forks two more and stays: the bomb keeps the slice at its limit.
        "fork bomb": ["bash", "-c", "b() { b | b & sleep 60; }; b"],
        "CPU spin on every core": ["sh", "-c", "for i in $(seq $(nproc)); do (while :; do :; done) & done; wait"],
        # 32 MiB: well under a second unthrottled, 32 s at the limit.
        "IO storm (O_DIRECT)": ["dd", "if=/dev/zero", "of=storm", "bs=1M", "count=32", "oflag=direct"],
    }
    for n, (name, argv) in enumerate(attacks.items()):
        unit = f"layerone-qualify-attack-{n}.service"
        before = attack_counters(uid, unit)
        begin = time.monotonic()
        # A's own process in A's slice, as its cron jobs and its shell are; stopped, with all it
        # started, once the probe is done (RuntimeMaxSec= only if this script dies).
        sh("systemd-run", "--quiet", f"--unit={unit}", f"--slice=user-{uid}.slice", f"--uid={uid}",
           f"--gid={gid}", f"--working-directory={shop.home}", f"--property=RuntimeMaxSec={seconds + 60}",
           "--property=KillSignal=SIGKILL", "--", *argv)
        seen = probe(OTHER, seconds)
        elapsed = time.monotonic() - begin
        state = sh("systemctl", "is-active", unit, check_rc=False).stdout.strip()
        after = attack_counters(uid, unit)
        sh("systemctl", "stop", unit)
        sh("systemctl", "reset-failed", unit, check_rc=False)
        delta = {k: after[k] - before[k] for k in after if k != "pids_peak"}
        print(f"   | {name}, after {elapsed:.1f} s: {shop.username}'s slice {delta}, pids peak {after['pids_peak']}")
        check(seen["failures"] == 0 and seen["requests"] > 0,
              f"during the {name}, every probe of {other.username}'s page answered 200 within 10 s: {seen}", seen)
        figures[name] = seen
        check(state == "active", f"the {name} was still running when the probe ended (held, not done)", state)
        if name == "fork bomb":
            check(delta["forks_refused"] > 0 and after["pids_peak"] <= limits["processes"],
                  f"the kernel refused {delta['forks_refused']} forks at TasksMax={limits['processes']} "
                  f"(pids.events max), the slice peaked at {after['pids_peak']} tasks", (delta, after))
        elif name.startswith("CPU"):
            share = after["unit_cpu_s"] / elapsed
            check(delta["nr_throttled"] > 0 and after["unit_cpu_s"] <= limits["cpu_percent"] / 100 * elapsed + 0.2,
                  f"the kernel throttled the slice in {delta['nr_throttled']} of its {delta['nr_periods']} periods "
                  f"({delta['throttled_ns'] / 1e9:.1f} s): the spinners had {after['unit_cpu_s']:.2f} s of CPU in "
                  f"{elapsed:.1f} s ({share:.2f} of a core), at CPUQuota={limits['cpu_percent']}%", (delta, after))
        else:
            rate = limits["io_kib_per_sec"] * 1024
            check(0 < delta["written_bytes"] <= rate * elapsed + 1024 * 1024,
                  f"{delta['written_bytes']} bytes written through the block throttle in {elapsed:.1f} s, "
                  f"at IOWriteBandwidthMax={rate} bytes/s", (delta, elapsed))
            (shop.home / "storm").unlink(missing_ok=True)
    print("   | figures: " + json.dumps({k: {m: v[m] for m in ("requests", "p50_ms", "p99_ms", "max_ms")}
                                        for k, v in figures.items()}))

    # The tenant's work done by the node (its usage walk) runs in the same slice.
    last = max((row for row, _ in audit_invocations()), default=0)
    cursor = sh("journalctl", "-b", "-n", "0", "--show-cursor", "--no-pager").strip().split("cursor: ")[-1]
    api.run("observe_account_usage", {"id": shop.ids["account"]})
    rows = [d for _, d in audit_invocations(last)]
    check(any("systemd-run" in d and f"--slice=user-{uid}.slice" in d and "layerone-tenant" in d for d in rows),
          f"the node started {shop.username}'s usage walk with systemd-run --scope --slice=user-{uid}.slice "
          "(its audit trail)", rows)
    scopes = wait_until("systemd's record of the worker's scope", lambda: [
        l for l in sh("journalctl", "-b", "_PID=1", f"--after-cursor={cursor}", "-o", "cat", "--no-pager").splitlines()
        if l.startswith("Started run-") and "layerone-tenant" in l and f"--uid {uid} " in l])
    ok(f"and systemd started a transient scope for it: {scopes[0][:160]}")


def processes_step(shop, other):
    step("each tenant sees only its own processes, in its shell and its PHP (/proc hidepid=invisible)")
    gid = proc_group_gid()
    check(hidden_proc(gid), f"/proc is mounted hidepid=invisible with layerone-proc (gid {gid}) exempted",
          proc_mount_options())
    line = f"proc /proc proc nosuid,nodev,noexec,hidepid=invisible,gid={gid} 0 0"
    check(line in pathlib.Path("/etc/fstab").read_text().splitlines(), f"/etc/fstab has `{line}` for every boot")
    for unit in ("systemd-logind.service", "polkit.service"):
        sh("systemctl", "start", unit)
        pid = sh("systemctl", "show", "-P", "MainPID", unit).strip()
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
        groups = next(l.split(":", 1)[1].split() for l in status.splitlines() if l.startswith("Groups:"))
        check(str(gid) in groups, f"{unit} (pid {pid}) runs in layerone-proc: groups {' '.join(groups)}")
    sleeper = as_user(other.username, "sleep", "317")
    try:
        wait_until(f"{other.username}'s sleep in root's ps",
                   lambda: (other.username, str(sleeper.pid), "sleep 317") in ps_lines())
        ok(f"{other.username} runs `sleep 317` (pid {sleeper.pid}), which root's ps lists")
        seen = ps_lines(shop.username)
        print("\n".join(f"   | {u:<8} {pid:>6} {args}" for u, pid, args in seen))
        check(seen and {u for u, _, _ in seen} == {shop.username},
              f"as {shop.username}, `ps -eo user,pid,args` lists only {shop.username}'s processes ({len(seen)})", seen)
        put_file(shop.docroot / "ps.php", PS_PHP, shop.username)
        status, _, body = http_get(SHOP, "/ps.php")
        print("\n".join(f"   | {l}" for l in body.splitlines()))
        users = {l.split(None, 1)[0] for l in body.splitlines()[1:] if l.strip()}
        check(status == 200 and users == {shop.username},
              f"through Apache and PHP-FPM, the tenant's PHP's ps lists only {shop.username}'s processes", body)
        seen = ps_lines(other.username)
        check({u for u, _, _ in seen} == {other.username} and str(sleeper.pid) in [p for _, p, _ in seen],
              f"and {other.username} sees its own sleep and nothing of anyone else", seen)
    finally:
        sleeper.kill()
        sleeper.wait()
    (shop.docroot / "ps.php").unlink()


def proc_drift_step():
    step("/proc remounted without hidepid=: `--check` names it, a boot's remount and `layerone install` restore it")
    gid = proc_group_gid()
    sh("mount", "-o", "remount,hidepid=off", "/proc")
    check(not hidden_proc(gid), "/proc remounted with hidepid=off", proc_mount_options())
    out = sh("layerone", "install", "--check")
    check("remount /proc with nosuid,nodev,noexec,hidepid=invisible" in out, "--check names the remount", out)
    check(not hidden_proc(gid), "and changed nothing")
    # What systemd-remount-fs.service runs at boot for each API file system /etc/fstab names.
    sh("mount", "/proc", "-o", "remount")
    check(hidden_proc(gid), "`mount /proc -o remount`, as systemd-remount-fs does at boot, takes "
          "hidepid=invisible back from /etc/fstab", proc_mount_options())
    sh("mount", "-o", "remount,hidepid=off", "/proc")
    out = sh("layerone", "install")
    check(hidden_proc(gid), "`layerone install` remounted /proc with hidepid=invisible", out)
    out = sh("layerone", "install", "--check")
    check("nothing to change" in out, "--check: nothing to change", out)


def drift_step():
    step("`layerone install --check` names a setting edited by hand, `layerone install` restores it")
    main_cf = pathlib.Path("/etc/postfix/main.cf")
    text = main_cf.read_text()
    edited = "\n".join(
        "smtpd_milters = " if l.startswith("smtpd_milters") else l for l in text.splitlines()) + "\n"
    check(edited != text, "main.cf had smtpd_milters")
    main_cf.write_text(edited)
    out = sh("layerone", "install", "--check")
    check("smtpd_milters" in out, "--check names the drifted setting smtpd_milters", out)
    check(main_cf.read_text() == edited, "and changed nothing")
    out = sh("layerone", "install")
    check(main_cf.read_text() == text, "install restored main.cf")
    adopted = [p for p in pathlib.Path("/etc/layerone/override").rglob("*main.cf*")]
    check(adopted and any(a.read_text() == edited for a in adopted), f"and kept the edited file in the override area: {adopted}")
    out = sh("layerone", "install", "--check")
    check("nothing to change" in out, "--check: nothing to change", out)


def watch_runner_step(api, tenant):
    step("the watching runner, the alternative to the timer and path units")
    sh("layerone", "install", "--runner", "watch")
    wait_until("layerone-runner-watch active", lambda: unit_active("layerone-runner-watch.service"), timeout=30)
    check(not unit_active("layerone-runner.path"), "the path unit is off")
    usage = api.run("observe_account_usage", {"id": tenant.ids["account"]})
    ok(f"a job runs through the watching runner (observe_account_usage: {usage['disk_bytes']} bytes)")
    sh("layerone", "install", "--runner", "timer")
    check(unit_active("layerone-runner.path"), "back to the timer and path units")


def tenant_ops(t):
    """account + web domain + PHP + database (with user and grant) + mail domain, mailbox, DKIM."""
    return [t.account(), t.web(), t.php()] + t.database() + t.mail()


def bench(deb):
    key, pin = install_node(deb)
    api = ControlPlane(key, pin)
    for unit in main_units():
        wait_until(f"{unit} active", lambda: unit_active(unit), timeout=60)
    # One warm-up tenant: the first pool, database and key of a node pay one-time costs.
    api.run_all(tenant_ops(Tenant("warm0", "warm0.example.test")))
    step("one tenant: account + web domain + PHP 8.2 + database, user, grant + mail domain, mailbox, DKIM")
    singles = []
    for n in range(5):
        t = Tenant(f"bench{n}", f"bench{n}.example.test")
        begin = time.monotonic()
        api.run_all(tenant_ops(t))
        singles.append(time.monotonic() - begin)
        ok(f"tenant {n}: {singles[-1]:.3f} s from the first request to the last result")
    singles.sort()
    step("20 tenants in one go")
    many = [Tenant(f"fleet{n}", f"fleet{n}.example.test") for n in range(20)]
    begin = time.monotonic()
    api.run_all([op for t in many for op in tenant_ops(t)])
    twenty = time.monotonic() - begin
    ok(f"20 tenants ({20 * len(tenant_ops(many[0]))} jobs): {twenty:.3f} s from the first request to the last result")
    print(json.dumps({"one_tenant_s": {"min": round(singles[0], 3), "median": round(singles[2], 3),
                                       "max": round(singles[-1], 3), "runs": len(singles)},
                      "twenty_tenants_s": round(twenty, 3),
                      "jobs_per_tenant": len(tenant_ops(many[0]))}))


def main(argv):
    if len(argv) < 3 or argv[1] not in ("run", "bench"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if argv[1] == "run":
            qualify(argv[2])
        else:
            bench(argv[2])
    except Failed as e:
        print(f"\nFAILED after {time.monotonic() - started:.1f} s: {e}", flush=True)
        return 1
    print(f"\n== qualification passed in {time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
