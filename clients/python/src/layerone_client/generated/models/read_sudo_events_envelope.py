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
    from ..models.read_sudo_events_request import ReadSudoEventsRequest


T = TypeVar("T", bound="ReadSudoEventsEnvelope")


@_attrs_define
class ReadSudoEventsEnvelope:
    """
    Attributes:
        action (Literal['read_sudo_events']):
        node_id (str):
        request_id (str):
        resource (ReadSudoEventsRequest): Read a page of sudo's own log.
    """

    action: Literal["read_sudo_events"]
    node_id: str
    request_id: str
    resource: ReadSudoEventsRequest

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
        from ..models.read_sudo_events_request import ReadSudoEventsRequest

        d = dict(src_dict)
        action = cast(Literal["read_sudo_events"], d.pop("action"))
        if action != "read_sudo_events":
            raise ValueError(
                f"action must match const 'read_sudo_events', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = ReadSudoEventsRequest.from_dict(d.pop("resource"))

        read_sudo_events_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return read_sudo_events_envelope
