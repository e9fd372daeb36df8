"""A client of a layerone node: typed classes for every operation's request, envelope, job and
result (`layerone_client.models`, generated from the node's OpenAPI document), and `Node`, the
pinned HTTPS transport (submit, wait on the events feed, blobs, node-scope calls)."""

from .generated import models
from .transport import (
    ApiError,
    JobError,
    JobFailed,
    LayeroneError,
    Node,
    Outcome,
    PinMismatch,
    ProtocolError,
    WaitTimeout,
    new_request_id,
    parse_pin,
    spki_sha256,
)

__all__ = [
    "ApiError",
    "JobError",
    "JobFailed",
    "LayeroneError",
    "Node",
    "Outcome",
    "PinMismatch",
    "ProtocolError",
    "WaitTimeout",
    "models",
    "new_request_id",
    "parse_pin",
    "spki_sha256",
]
