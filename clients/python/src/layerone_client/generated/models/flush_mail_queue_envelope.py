from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.flush_mail_queue_request import FlushMailQueueRequest


T = TypeVar("T", bound="FlushMailQueueEnvelope")


@_attrs_define
class FlushMailQueueEnvelope:
    """
    Attributes:
        action (Literal['flush_mail_queue']):
        node_id (str):
        request_id (str):
        resource (FlushMailQueueRequest):
    """

    action: Literal["flush_mail_queue"]
    node_id: str
    request_id: str
    resource: FlushMailQueueRequest

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        node_id = self.node_id

        request_id = self.request_id

        resource = self.resource.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "node_id": node_id,
                "request_id": request_id,
                "resource": resource,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.flush_mail_queue_request import FlushMailQueueRequest

        d = dict(src_dict)
        action = cast(Literal["flush_mail_queue"], d.pop("action"))
        if action != "flush_mail_queue":
            raise ValueError(
                f"action must match const 'flush_mail_queue', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = FlushMailQueueRequest.from_dict(d.pop("resource"))

        flush_mail_queue_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return flush_mail_queue_envelope
