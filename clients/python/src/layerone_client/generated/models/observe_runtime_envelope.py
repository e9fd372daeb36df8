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
    from ..models.observe_runtime_request import ObserveRuntimeRequest


T = TypeVar("T", bound="ObserveRuntimeEnvelope")


@_attrs_define
class ObserveRuntimeEnvelope:
    """
    Attributes:
        action (Literal['observe_runtime']):
        node_id (str):
        request_id (str):
        resource (ObserveRuntimeRequest):
    """

    action: Literal["observe_runtime"]
    node_id: str
    request_id: str
    resource: ObserveRuntimeRequest

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
        from ..models.observe_runtime_request import ObserveRuntimeRequest

        d = dict(src_dict)
        action = cast(Literal["observe_runtime"], d.pop("action"))
        if action != "observe_runtime":
            raise ValueError(
                f"action must match const 'observe_runtime', got '{action}'"
            )

        node_id = d.pop("node_id")

        request_id = d.pop("request_id")

        resource = ObserveRuntimeRequest.from_dict(d.pop("resource"))

        observe_runtime_envelope = cls(
            action=action,
            node_id=node_id,
            request_id=request_id,
            resource=resource,
        )

        return observe_runtime_envelope
