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
    from ..models.observe_mail_queue_request import ObserveMailQueueRequest


T = TypeVar("T", bound="ObserveMailQueueEnvelope")


@_attrs_define
class ObserveMailQueueEnvelope:
    """
    Attributes:
        action (Literal['observe_mail_queue']):
        node_id (str):
        request_id (str):
        resource (ObserveMailQueueRequest):
    """

    action: Literal["observe_mail_queue"]
    node_id: str
    request_id: str
    resource: ObserveMailQueueRequest

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
        from ..models.observe_mail_queue_request import ObserveMailQueueRequest

        d = dict(src_dict)
        action = cast(Literal["observe_mail_queue"], d.pop("action"))
        if action != "observe_mail_queue":
            raise ValueError(
                f"action must match const 'observe_mail_queue', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = ObserveMailQueueRequest.from_dict(d.pop("resource"))

        observe_mail_queue_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return observe_mail_queue_envelope
