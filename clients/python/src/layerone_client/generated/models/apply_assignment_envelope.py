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
    from ..models.apply_assignment_request import ApplyAssignmentRequest


T = TypeVar("T", bound="ApplyAssignmentEnvelope")


@_attrs_define
class ApplyAssignmentEnvelope:
    """
    Attributes:
        action (Literal['apply_assignment']):
        node_id (str):
        request_id (str):
        resource (ApplyAssignmentRequest): Apply the fleet's assignment of modules to this node.
    """

    action: Literal["apply_assignment"]
    node_id: str
    request_id: str
    resource: ApplyAssignmentRequest

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
        from ..models.apply_assignment_request import ApplyAssignmentRequest

        d = dict(src_dict)
        action = cast(Literal["apply_assignment"], d.pop("action"))
        if action != "apply_assignment":
            raise ValueError(
                f"action must match const 'apply_assignment', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = ApplyAssignmentRequest.from_dict(d.pop("resource"))

        apply_assignment_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return apply_assignment_envelope
