"""The connection to one node: pinned HTTPS on the standard library (`http.client`, `ssl`).

Written by hand, beside the generated classes (`layerone_client.generated`), which only
describe what is sent and read. A node's certificate is self-signed until ACME succeeds, so
trust is not delegated to a CA: the caller pins the node's public key (`spki-sha256:<hex>`,
the SHA-256 of the certificate's SubjectPublicKeyInfo, which a renewal with the kept key does
not change) or its certificate (`<hex>` or `sha256:<hex>`, the SHA-256 of the DER, which every
renewal changes). The pin is compared after the TLS handshake and before any byte of a
request is written; a mismatch closes the connection and raises `PinMismatch`.

A `Node` holds one kept-alive connection and is not safe to share between threads: give each
thread its own.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import math
import secrets
import socket
import ssl
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

SPKI_PREFIX = "spki-sha256:"
# The events feed's long-poll waits at most this long per request (the node refuses more).
MAX_WAIT_SECS = 60
# Events read per page while waiting.
EVENTS_PAGE = 100
# Final events kept for jobs nobody waits for yet (the oldest are dropped past this).
MAX_KEPT_OUTCOMES = 10_000
TERMINAL_STATES = frozenset({"succeeded", "failed", "superseded"})


class LayeroneError(Exception):
    """Anything this client raises about a node."""


class PinMismatch(LayeroneError):
    """The node presented a certificate (or key) other than the pinned one; nothing was sent."""

    def __init__(self, presented: str) -> None:
        super().__init__(f"the node's pin {presented} is not the pinned one")
        self.presented = presented


class ApiError(LayeroneError):
    """The node refused a request: its stable `code`, the `field` at fault (empty for the
    whole request), on 429 and 503 how many seconds to wait before trying again and, on 410
    `events_lost` (the events feed was trimmed past the cursor read from), `first_cursor`,
    the oldest event the feed still holds."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str,
        retry_after: int | None,
        first_cursor: int | None = None,
    ) -> None:
        super().__init__(f"{status} {code}" + (f" at {field}" if field else "") + f": {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after
        self.first_cursor = first_cursor


class ProtocolError(LayeroneError):
    """The node answered something this client cannot read (not HTTP, not the JSON it
    documents, a blob that is not the one named)."""


class WaitTimeout(LayeroneError):
    """A job did not reach a final state in the time given."""


@dataclass(frozen=True)
class JobError:
    """Why a job failed: the operation's stable `code`, and the `field` of the request at
    fault when there is one."""

    code: str
    message: str
    field: str
    retryable: bool


class JobFailed(LayeroneError):
    """The typed result of a job that did not succeed was asked for."""

    def __init__(self, request_id: str, state: str, error: JobError | None) -> None:
        detail = f": {error.code}: {error.message}" if error else ""
        super().__init__(f"job {request_id} {state}{detail}")
        self.request_id = request_id
        self.state = state
        self.error = error


class FromDict(Protocol):
    """What every generated class has: a constructor from the JSON it describes."""

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self: ...


class ToDict(Protocol):
    """What every generated class has: the JSON it stands for."""

    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=FromDict)


@dataclass(frozen=True)
class Outcome:
    """A job's final state as the events feed reported it: `succeeded` with the operation's
    `result`, `failed` with its `error`, or `superseded` (a newer request for the same
    resource replaced it before it ran). `cursor` is its final event's, or `None` when the
    feed had lost that event (trimmed before it was read) and the job was read directly."""

    request_id: str
    operation: str
    state: str
    result: dict[str, Any] | None
    error: JobError | None
    cursor: int | None

    def parsed(self, cls: type[R]) -> R:
        """The result as the operation's generated result class (`EnsureAccountResult`...);
        `JobFailed` if the job did not succeed."""
        if self.state != "succeeded" or self.result is None:
            raise JobFailed(self.request_id, self.state, self.error)
        return cls.from_dict(self.result)


def new_request_id() -> str:
    """A fresh request id (32 hex digits). Sending a request again under the same id is safe:
    the node answers with the same job."""
    return secrets.token_hex(16)


def parse_pin(pin: str) -> tuple[bool, bytes]:
    """`(is_key_pin, digest)` of `spki-sha256:<hex>` (a key pin) or `<hex>` / `sha256:<hex>`
    (a certificate pin); any case, optionally with `:` between the digits."""
    text = pin.strip()
    spki = text[: len(SPKI_PREFIX)].lower() == SPKI_PREFIX
    if spki:
        digits = text[len(SPKI_PREFIX) :]
    elif text[:7].lower() == "sha256:":
        digits = text[7:]
    else:
        digits = text
    digits = digits.replace(":", "")
    try:
        digest = bytes.fromhex(digits) if len(digits) == 64 else b""
    except ValueError:
        digest = b""
    if len(digest) != 32:
        raise ValueError(
            "a pin is `spki-sha256:` and the SHA-256 of the public key, or the SHA-256 of "
            "the certificate: 64 hexadecimal digits"
        )
    return spki, digest


def _der_element(data: bytes, at: int) -> tuple[int, int, int]:
    """The DER element at `at`: `(tag, start of its content, end of its content)`."""
    if at + 2 > len(data):
        raise ProtocolError("the certificate is truncated")
    tag, first = data[at], data[at + 1]
    at += 2
    if first < 0x80:
        length = first
    else:
        count = first & 0x7F
        if count == 0 or count > 4 or at + count > len(data):
            raise ProtocolError("the certificate has a bad length")
        length = int.from_bytes(data[at : at + count], "big")
        at += count
    if at + length > len(data):
        raise ProtocolError("the certificate is truncated")
    return tag, at, at + length


def spki_sha256(certificate: bytes) -> bytes:
    """The SHA-256 of a DER certificate's SubjectPublicKeyInfo (the whole DER `SEQUENCE`):
    `tbsCertificate`'s seventh element, or sixth without the explicit version."""
    _, cert, _ = _der_element(certificate, 0)
    _, tbs, tbs_end = _der_element(certificate, cert)
    at = tbs
    fields: list[tuple[int, int, int]] = []
    while at < tbs_end and len(fields) < 7:
        tag, start, end = _der_element(certificate, at)
        fields.append((tag, at, end))
        at = end
    if fields and fields[0][0] == 0xA0:  # [0] EXPLICIT version
        fields = fields[1:]
    if len(fields) < 6 or fields[5][0] != 0x30:
        raise ProtocolError("the certificate has no SubjectPublicKeyInfo")
    _, begin, end = fields[5]
    return hashlib.sha256(certificate[begin:end]).digest()


def _presented(spki: bool, certificate: bytes) -> tuple[str, bytes]:
    digest = spki_sha256(certificate) if spki else hashlib.sha256(certificate).digest()
    return (SPKI_PREFIX if spki else "") + digest.hex(), digest


class _PinnedConnection(http.client.HTTPConnection):
    """HTTP/1.1 over TLS whose `connect` checks the pin before `http.client` writes anything."""

    def __init__(
        self, host: str, port: int, timeout: float, spki: bool, digest: bytes, sni: str | None
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._spki = spki
        self._digest = digest
        self._sni = sni
        # The pin is the trust: no CA, no name check. The handshake itself (the server's
        # signature with the certificate's key) is still verified by OpenSSL.
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self._context.check_hostname = False
        self._context.verify_mode = ssl.CERT_NONE
        self._context.minimum_version = ssl.TLSVersion.TLSv1_2

    def connect(self) -> None:
        raw = socket.create_connection((self.host, self.port), self.timeout)
        try:
            tls = self._context.wrap_socket(raw, server_hostname=self._sni)
        except BaseException:
            raw.close()
            raise
        try:
            certificate = tls.getpeercert(binary_form=True)
            if certificate is None:
                raise ProtocolError("the node presented no certificate")
            shown, digest = _presented(self._spki, certificate)
            if not hmac.compare_digest(digest, self._digest):
                raise PinMismatch(shown)
        except BaseException:
            tls.close()
            raise
        self.sock = tls


class Node:
    """One node's API: `Node("https://node.example:8443", key, "spki-sha256:...")`.

    `node_id` is needed only for node-scope operations (the node refuses one addressed to
    another node). `after` is the events feed cursor waits start from: 0 reads the feed from
    its beginning; a control plane that keeps its cursor passes the one it kept (see
    `cursor`)."""

    def __init__(
        self,
        url: str,
        key: str,
        pin: str,
        node_id: str | None = None,
        timeout: float = 30.0,
        after: int = 0,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            raise ValueError(f"the node's URL must be https://host[:port]: {url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"the node's URL has a query or fragment: {url!r}")
        self._host = parts.hostname
        self._port = parts.port or 443
        self._base = parts.path.rstrip("/")
        self._spki, self._digest = parse_pin(pin)
        self._key = key
        self.node_id = node_id
        self.timeout = timeout
        self.cursor = after
        self._connection: _PinnedConnection | None = None
        self._finished: dict[str, Outcome] = {}
        # Whether the feed was ever trimmed past this client's cursor: the ends of jobs
        # nobody waited for yet may have been among the events lost, so a wait for a job
        # whose end was not read reads the job itself first.
        self._lost_events = False
        self.connections_opened = 0

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _connect(self) -> _PinnedConnection:
        sni = None if _is_ip(self._host) else self._host
        connection = _PinnedConnection(
            self._host, self._port, self.timeout, self._spki, self._digest, sni
        )
        connection.connect()
        self.connections_opened += 1
        return connection

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str = "application/json",
        wait: float = 0.0,
    ) -> tuple[int, dict[str, str], bytes]:
        """Sends one request (with the key) and returns `(status, headers, body)`, whatever
        the status. A kept-alive connection the node closed while idle is replaced once:
        every request this client sends is safe to repeat (submissions by request id,
        uploads by content)."""
        headers = {"Authorization": f"Bearer {self._key}"}
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in range(2):
            reused = self._connection is not None
            connection = self._connection if self._connection is not None else self._connect()
            self._connection = None
            try:
                if connection.sock is not None:
                    connection.sock.settimeout(self.timeout + wait)
                connection.request(method, self._base + path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                connection.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if response.will_close:
                connection.close()
            else:
                self._connection = connection
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _json(self, method: str, path: str, body: bytes | None = None, wait: float = 0.0) -> Any:
        status, headers, data = self.request(method, path, body, wait=wait)
        if not 200 <= status < 300:
            raise _api_error(status, headers, data)
        try:
            return json.loads(data)
        except ValueError as e:
            raise ProtocolError(f"{method} {path} answered {status} with no JSON") from e

    def submit(self, envelope: ToDict | Mapping[str, Any]) -> dict[str, Any]:
        """`POST /v1/jobs`: an envelope (a generated `...Envelope` or its JSON). Answers the
        job's view (`received`, or the same job again for a request id already sent)."""
        document = envelope if isinstance(envelope, Mapping) else envelope.to_dict()
        body = json.dumps(document).encode()
        view: dict[str, Any] = self._json("POST", "/v1/jobs", body)
        return view

    def submit_op(
        self, operation: str, resource: ToDict | Mapping[str, Any], request_id: str | None = None
    ) -> dict[str, Any]:
        """A tenant-scope operation's request (a generated `...Request` or its JSON)."""
        return self.submit(
            {
                "request_id": request_id or new_request_id(),
                "operation": operation,
                "resource": _document(resource),
            }
        )

    def submit_node_op(
        self,
        action: str,
        resource: ToDict | Mapping[str, Any],
        request_id: str | None = None,
        node_id: str | None = None,
    ) -> dict[str, Any]:
        """A node-scope operation's request, for this node's id (`node_id`, or the one the
        `Node` was given); nothing is sent without one."""
        target = node_id or self.node_id
        if not target:
            raise ValueError(f"{action} is a node-scope operation: give the node's id")
        return self.submit(
            {
                "request_id": request_id or new_request_id(),
                "action": action,
                "node_id": target,
                "resource": _document(resource),
            }
        )

    def job(self, request_id: str) -> dict[str, Any]:
        """`GET /v1/jobs/{request_id}`: one job's view."""
        view: dict[str, Any] = self._json("GET", f"/v1/jobs/{urllib.parse.quote(request_id)}")
        return view

    def events(self, after: int, wait: int = 0, limit: int = EVENTS_PAGE) -> dict[str, Any]:
        """`GET /v1/events`: `{events, next}`, the changes after `after`, waiting up to `wait`
        seconds (at most 60) for the first one."""
        page: dict[str, Any] = self._json(
            "GET", f"/v1/events?after={after}&wait={wait}&limit={limit}", wait=wait
        )
        return page

    def wait(self, request_id: str, timeout: float = 60.0) -> Outcome:
        """Follows the events feed from `cursor` until the job's final event, which carries
        its result or error: one long-poll per page of changes, never a request per job. The
        final events of other jobs read on the way are kept for their own `wait`.

        Where the node trimmed its feed past `cursor` (410 `events_lost`), the job's end may
        be among the events lost: the job is read directly (`GET /v1/jobs/{request_id}`) and
        the feed followed on from the oldest event it still holds. From then on, a wait for a
        job whose end this `Node` has not read starts with that direct read too."""
        deadline = time.monotonic() + timeout
        look = self._lost_events
        while True:
            outcome = self._finished.pop(request_id, None)
            if outcome is not None:
                return outcome
            if look:
                look = False
                # The cursor is moved first: any change after this read has an event after it.
                view = self.job(request_id)
                if view.get("state") in TERMINAL_STATES:
                    return _outcome_of_view(view)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(f"job {request_id} is not final after {timeout} s")
            wait = min(MAX_WAIT_SECS, max(1, math.ceil(remaining)))
            try:
                page = self.events(self.cursor, wait)
            except ApiError as e:
                if e.code != "events_lost" or e.first_cursor is None:
                    raise
                self.cursor = max(self.cursor, e.first_cursor - 1)
                self._lost_events = True
                look = True
                continue
            for event in page.get("events", []):
                self._keep(event)
            self.cursor = max(self.cursor, int(page.get("next", self.cursor)))

    def _keep(self, event: Mapping[str, Any]) -> None:
        if event.get("kind") != "job" or event.get("state") not in TERMINAL_STATES:
            return
        outcome = _outcome_of(event, cursor=int(event["cursor"]))
        self._finished.pop(outcome.request_id, None)
        self._finished[outcome.request_id] = outcome
        while len(self._finished) > MAX_KEPT_OUTCOMES:
            del self._finished[next(iter(self._finished))]

    def put_blob(self, content: bytes) -> str:
        """`PUT /v1/blobs/{sha256}`: uploads content (a certificate bundle, an archive to
        restore) under its SHA-256, the name a job then gives. Uploading it again is fine."""
        name = hashlib.sha256(content).hexdigest()
        status, headers, data = self.request(
            "PUT", f"/v1/blobs/{name}", content, content_type="application/octet-stream"
        )
        if not 200 <= status < 300:
            raise _api_error(status, headers, data)
        try:
            stored = json.loads(data).get("blob")
        except (ValueError, AttributeError) as e:
            raise ProtocolError("the upload's answer is not the JSON documented") from e
        if stored != name:
            raise ProtocolError(f"the node stored the blob as {stored!r}, not {name}")
        return name

    def get_blob(self, name: str) -> bytes:
        """`GET /v1/blobs/{sha256}`: a blob the node made (an account's backup), checked
        against its name."""
        status, headers, data = self.request("GET", f"/v1/blobs/{urllib.parse.quote(name)}")
        if not 200 <= status < 300:
            raise _api_error(status, headers, data)
        if hashlib.sha256(data).hexdigest() != name:
            raise ProtocolError(f"the blob downloaded as {name} has another SHA-256")
        return data

    def catalogue(self) -> dict[str, Any]:
        """`GET /v1/catalogue`: every operation with its schemas, example and hash."""
        catalogue: dict[str, Any] = self._json("GET", "/v1/catalogue")
        return catalogue

    def health(self) -> dict[str, Any]:
        """`GET /v1/health`."""
        health: dict[str, Any] = self._json("GET", "/v1/health")
        return health


def _outcome_of(job: Mapping[str, Any], cursor: int | None) -> Outcome:
    """The outcome a final job event, or a final job's view, says: the two carry the same
    `request_id`, `operation`, `state`, `result` and `error`."""
    error = job.get("error")
    return Outcome(
        request_id=str(job["request_id"]),
        operation=str(job.get("operation") or ""),
        state=str(job["state"]),
        result=job.get("result"),
        error=(
            JobError(
                code=str(error.get("code", "")),
                message=str(error.get("message", "")),
                field=str(error.get("field") or ""),
                retryable=bool(error.get("retryable", False)),
            )
            if isinstance(error, Mapping)
            else None
        ),
        cursor=cursor,
    )


def _outcome_of_view(view: Mapping[str, Any]) -> Outcome:
    return _outcome_of(view, cursor=None)


def _document(value: ToDict | Mapping[str, Any]) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else value.to_dict()


def _is_ip(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True


def _api_error(status: int, headers: Mapping[str, str], data: bytes) -> LayeroneError:
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("code"), str):
        return ProtocolError(f"the node answered {status} without an error code")
    retry = headers.get("retry-after", "")
    first_cursor = body.get("first_cursor")
    return ApiError(
        status=status,
        code=body["code"],
        message=str(body.get("message", "")),
        field=str(body.get("field") or ""),
        retry_after=int(retry) if retry.isdigit() else None,
        first_cursor=first_cursor if isinstance(first_cursor, int) else None,
    )
