"""The installed `layerone_client` wheel against a running dev node, one scenario per run:

    python against_node.py examples DEV_JSON PLAN_JSON
    python against_node.py errors DEV_JSON README
    python against_node.py pin DEV_JSON
    python against_node.py trimmed DEV_JSON

`crates/cli/tests/broker/python_client.rs` starts the dev node, installs the wheel into a fresh
virtualenv and runs each scenario under a time bound. DEV_JSON is the dev node's `dev.json`
(url, key, pins, node id); PLAN_JSON lists operations' examples in an order that works, each
after its prerequisites' examples (computed from the declarations by the Rust test, which
splits every operation between a Debian and a CloudLinux dev node). The trimmed scenario wants
a dev node that keeps a handful of events (`--events-kept 5`).
Any failed check raises; the exit status says whether the scenario held.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import sys
import threading
import time
from pathlib import Path
from typing import Any

from layerone_client import ApiError, Node, PinMismatch, models, new_request_id

WAIT = 60.0


def pascal(snake: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in snake.split("_"))


def connect(dev: dict[str, Any], pin: str | None = None) -> Node:
    return Node(
        dev["url"],
        dev["api_key"],
        pin or dev["pin_spki"],
        node_id=dev["node_id"],
    )


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def examples(dev: dict[str, Any], plan: list[dict[str, Any]]) -> None:
    """Every step submitted through its generated envelope class, the answer read as its
    generated job class, and waited for on the events feed; every target's result parsed
    into its generated result class, which must give back exactly the JSON the node sent. A restore's archive goes through the blobs:
    the backup the plan made is downloaded and uploaded again, and the restore names it."""
    node = connect(dev)
    backups: list[str] = []
    parsed: list[str] = []
    failed: dict[str, str] = {}
    started = time.monotonic()
    for step in plan:
        operation: str = step["operation"]
        resource: dict[str, Any] = dict(step["resource"])
        if "blob" in resource and operation == "restore_account_backup":
            check(bool(backups), "the plan restores before any backup was made")
            archive = node.get_blob(backups[-1])
            resource["blob"] = node.put_blob(archive)
        request_class = getattr(models, f"{pascal(operation)}Request")
        envelope_class = getattr(models, f"{pascal(operation)}Envelope")
        request = request_class.from_dict(resource)
        check(request.to_dict() == resource, f"{operation}'s request class changed its example")
        request_id = new_request_id()
        if step["scope"] == "node":
            envelope = envelope_class(
                action=operation, node_id=node.node_id, request_id=request_id, resource=request
            )
        else:
            envelope = envelope_class(operation=operation, request_id=request_id, resource=request)
        view = node.submit(envelope)
        job = getattr(models, f"{pascal(operation)}Job").from_dict(view)
        check(job.request_id == request_id, f"{operation}: the node answered another job")
        check(job.to_dict() == view, f"{operation}'s job class changed its view: {view}")
        outcome = node.wait(request_id, WAIT)
        if outcome.state != "succeeded":
            code = outcome.error.code if outcome.error else "?"
            if step["target"]:
                failed[operation] = code
            print(f"{operation}: {outcome.state} {code}", file=sys.stderr)
            continue
        sent = outcome.result
        if sent is None:
            raise AssertionError(f"{operation}'s final event carries no result")
        result_class = getattr(models, f"{pascal(operation)}Result")
        result = outcome.parsed(result_class)
        check(isinstance(result, result_class), f"{operation}: not a {result_class.__name__}")
        check(
            result.to_dict() == sent,
            f"{operation}: {result_class.__name__} dropped or changed part of the result: "
            f"{sent} became {result.to_dict()}",
        )
        if operation == "create_account_backup":
            backups.append(str(sent["blob"]))
        if step["target"]:
            parsed.append(operation)
    print(
        json.dumps(
            {
                "parsed": parsed,
                "failed": failed,
                "steps": len(plan),
                "seconds": round(time.monotonic() - started, 1),
                "connections": node.connections_opened,
            }
        )
    )


def readme_example(dev: dict[str, Any], readme: Path) -> None:
    """The README's example, as written, with the dev node's URL, key, pin and id."""
    section = readme.read_text().split("\n## The Python client\n", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(
        compile(code, "README.md (The Python client)", "exec"),
        {"url": dev["url"], "key": dev["api_key"], "pin": dev["pin_spki"], "node_id": dev["node_id"]},
    )


def errors(dev: dict[str, Any], readme: Path) -> None:
    """Refusals as `ApiError` with the node's code and field; node-scope calls with the node
    id, refused for another id, and not sent at all without one; the README's example."""
    readme_example(dev, readme)
    node = connect(dev)
    account = {"id": "a1" * 16, "username": "shop1", "colour": "blue"}
    try:
        node.submit_op("ensure_account", account)
    except ApiError as e:
        check(
            (e.status, e.code, e.field) == (400, "unknown_field", "resource.colour"),
            f"an unknown field: {e.status} {e.code} {e.field}",
        )
    else:
        raise AssertionError("an unknown field was admitted")
    try:
        node.submit_op("ensure_account", {"id": "a1" * 16, "username": "Not A Name"})
    except ApiError as e:
        check(
            (e.code, e.field) == ("invalid_field", "resource.username"),
            f"a bad user name: {e.code} {e.field}",
        )
    else:
        raise AssertionError("a bad user name was admitted")
    try:
        node.get_blob("0" * 64)
    except ApiError as e:
        check(
            (e.status, e.code, e.field) == (404, "blob_not_found", "blob"),
            f"a missing blob: {e}",
        )
    else:
        raise AssertionError("a missing blob downloaded")

    # Node scope: this node's id is admitted and runs; another's is refused at `node_id`.
    request = models.ObserveRuntimeRequest(id="d4" * 16)
    view = node.submit_node_op("observe_runtime", request)
    outcome = node.wait(view["request_id"], WAIT)
    runtime = outcome.parsed(models.ObserveRuntimeResult)
    check(runtime.to_dict() == outcome.result, "observe_runtime's result did not round-trip")
    try:
        node.submit_node_op("observe_runtime", request, node_id="0b" * 16)
    except ApiError as e:
        check(
            (e.status, e.code, e.field) == (400, "wrong_node", "node_id"),
            f"another node's id: {e.status} {e.code} {e.field}",
        )
    else:
        raise AssertionError("a request for another node was admitted")
    without = Node(dev["url"], dev["api_key"], dev["pin_spki"])
    try:
        without.submit_node_op("observe_runtime", request)
    except ValueError:
        pass
    else:
        raise AssertionError("a node-scope request without a node id was sent")
    check(without.connections_opened == 0, "a node-scope request without a node id connected")
    print(json.dumps({"errors": "ok"}))


def ended(node: Node, request_id: str) -> dict[str, Any]:
    """The job's view once it is final, read job by job (not through the feed)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        view = node.job(request_id)
        if view["state"] in ("succeeded", "failed", "superseded"):
            return view
        time.sleep(0.05)
    raise AssertionError(f"job {request_id} did not end in {WAIT} s")


def trimmed(dev: dict[str, Any]) -> None:
    """`wait` from a cursor the node's feed was trimmed past (the dev node keeps 5 events):
    the feed answers 410 `events_lost` with the oldest cursor it holds, and `wait` still
    returns the outcome of each job whose final event was trimmed, read from the job itself,
    then follows the feed on from there."""
    node = connect(dev)
    account = node.submit_op(
        "ensure_account", models.EnsureAccountRequest(id="a1" * 16, username="shop1")
    )["request_id"]
    observe = models.ObservePhpVersionsRequest(id="c5" * 16)
    php = node.submit_node_op("observe_php_versions", observe)["request_id"]
    views = {rid: ended(node, rid) for rid in (account, php)}
    # More jobs until the feed holds neither job's events (each job is three events: queued,
    # running, its end; root trims at the end of the pass that ran it).
    lost: ApiError | None = None
    for _ in range(40):
        try:
            node.events(0)
        except ApiError as e:
            if e.code != "events_lost" or e.first_cursor is None:
                raise
            lost = e
            try:
                kept = node.events(e.first_cursor - 1, limit=1000)
            except ApiError:
                continue  # trimmed again, by the pass that ran the last job, in between
            if not any(ev.get("request_id") in views for ev in kept["events"]):
                break
        ended(node, node.submit_node_op("observe_php_versions", observe)["request_id"])
    else:
        raise AssertionError(f"the feed was not trimmed past the first jobs: {lost}")
    check(lost is not None and lost.first_cursor is not None, "events_lost said first_cursor")
    assert lost is not None and lost.first_cursor is not None
    first = lost.first_cursor
    check(
        (lost.status, lost.code, lost.field) == (410, "events_lost", "after"),
        f"a cursor behind the trim: {lost.status} {lost.code} {lost.field}",
    )
    check(first > 1, f"the oldest cursor left is {first}")
    try:
        node.events(first - 2)
    except ApiError as e:
        check(e.code == "events_lost" and e.first_cursor is not None, f"{e}")
    else:
        raise AssertionError("a cursor two below the oldest left read a page")

    # A client starting from 0, as a control plane that kept no cursor: both jobs' outcomes,
    # the first through the 410, the second because its end was among the events lost too.
    fresh = connect(dev)
    started = time.monotonic()
    outcome = fresh.wait(account, WAIT)
    check(outcome.state == "succeeded", f"ensure_account: {outcome}")
    check(outcome.cursor is None, "the outcome was read from the job, not from an event")
    check(outcome.result == views[account]["result"], "the outcome is the job's result")
    check(outcome.parsed(models.EnsureAccountResult).username == "shop1", "a typed result")
    check(fresh.cursor >= first - 1, f"the feed resumed at {fresh.cursor}, behind {first - 1}")
    outcome = fresh.wait(php, 10.0)
    check(outcome.state == "succeeded", f"observe_php_versions: {outcome}")
    check(outcome.result == views[php]["result"], "the outcome is the job's result")
    check(time.monotonic() - started < 10.0, "the trimmed jobs' outcomes came at once")
    # A job after the gap is followed as before.
    after = fresh.submit_node_op("observe_php_versions", observe)["request_id"]
    outcome = fresh.wait(after, WAIT)
    check(outcome.state == "succeeded", f"a job after the gap: {outcome}")
    print(json.dumps({"trimmed": "ok", "first_cursor": first, "cursor": fresh.cursor}))


class Recorder:
    """A TLS server with the dev node's own certificate and key that counts every byte of
    application data a client sends after the handshake."""

    def __init__(self, cert: Path, key: Path, answer: bytes = b"") -> None:
        self.answer = answer
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received: list[int] = []
        self.handshakes = 0
        self.thread = threading.Thread(target=self.serve_one, daemon=True)
        self.thread.start()

    def serve_one(self) -> None:
        self.listener.settimeout(20)
        raw, _ = self.listener.accept()
        raw.settimeout(10)
        with self.context.wrap_socket(raw, server_side=True) as tls:
            self.handshakes += 1
            total = 0
            try:
                while chunk := tls.recv(65536):
                    total += len(chunk)
                    if b"\r\n\r\n" in chunk:
                        break
                if total and self.answer:
                    tls.sendall(self.answer)
            except (ssl.SSLError, OSError):
                pass
            self.received.append(total)

    def done(self) -> int:
        self.thread.join(30)
        check(not self.thread.is_alive(), "the recorder saw no connection end")
        check(self.handshakes == 1, "the client did not complete a TLS handshake")
        return self.received[0]


def pin(dev: dict[str, Any], root: Path) -> None:
    """A wrong pin, of either form: `PinMismatch` after the handshake, and not one byte of
    application data sent (the recorder proves it, and with the right pin it sees the
    request). The real node with a wrong pin raises the same before any request."""
    cert, key = root / "tls" / "cert.pem", root / "tls" / "key.pem"
    wrong = {"spki-sha256:" + "ab" * 32, "cd" * 32}
    for bad in sorted(wrong):
        recorder = Recorder(cert, key)
        node = Node(f"https://127.0.0.1:{recorder.port}", dev["api_key"], bad)
        try:
            node.health()
        except PinMismatch as e:
            shown = e.presented
        else:
            raise AssertionError(f"the pin {bad} was accepted")
        check(recorder.done() == 0, f"with the pin {bad} the client sent application data")
        expected = dev["pin_spki"] if bad.startswith("spki-sha256:") else dev["pin_sha256"]
        check(shown == expected, f"the mismatch names {shown}, not the node's {expected}")
    # With the right pin the request arrives; the recorder answers it as the node's rate limit
    # does, and the refusal carries its code and Retry-After.
    body = b'{"code":"rate_limited","message":"too many requests","field":""}'
    limited = (
        b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
        b"Retry-After: 7\r\nConnection: close\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    for good in (dev["pin_spki"], dev["pin_sha256"]):
        recorder = Recorder(cert, key, limited)
        node = Node(f"https://127.0.0.1:{recorder.port}", dev["api_key"], good)
        try:
            node.health()
        except ApiError as e:
            check(
                (e.status, e.code, e.field, e.retry_after) == (429, "rate_limited", "", 7),
                f"the rate limit's answer read as {e.status} {e.code} {e.retry_after}",
            )
        else:
            raise AssertionError("a 429 was not raised")
        check(recorder.done() > 0, f"with the right pin {good} the recorder saw no request")
    real = Node(dev["url"], dev["api_key"], "spki-sha256:" + "ab" * 32)
    try:
        real.health()
    except PinMismatch:
        pass
    else:
        raise AssertionError("the node was reached with a wrong pin")
    check(re.fullmatch(r"spki-sha256:[0-9a-f]{64}", dev["pin_spki"]) is not None, "a key pin")
    health = connect(dev).health()
    check(isinstance(health, dict), "the right pin reads the node's health")
    print(json.dumps({"pin": "ok"}))


def main() -> None:
    scenario, dev_json = sys.argv[1], Path(sys.argv[2])
    dev = json.loads(dev_json.read_text())
    if scenario == "examples":
        examples(dev, json.loads(Path(sys.argv[3]).read_text()))
    elif scenario == "errors":
        errors(dev, Path(sys.argv[3]))
    elif scenario == "pin":
        pin(dev, dev_json.parent)
    elif scenario == "trimmed":
        trimmed(dev)
    else:
        raise SystemExit(f"unknown scenario {scenario}")


if __name__ == "__main__":
    main()
