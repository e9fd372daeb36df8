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
    from ..models.remove_ip_block_request import RemoveIpBlockRequest


T = TypeVar("T", bound="RemoveIpBlockEnvelope")


@_attrs_define
class RemoveIpBlockEnvelope:
    """
    Attributes:
        operation (Literal['remove_ip_block']):
        request_id (str):
        resource (RemoveIpBlockRequest):
    """

    operation: Literal["remove_ip_block"]
    request_id: str
    resource: RemoveIpBlockRequest

    def to_dict(self) -> dict[str, Any]:
        operation = self.operation

        request_id = self.request_id

        resource = self.resource.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "operation": operation,
                "request_id": request_id,
                "resource": resource,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.remove_ip_block_request import RemoveIpBlockRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_ip_block"], d.pop("operation"))
        if operation != "remove_ip_block":
            raise ValueError(
                f"operation must match const 'remove_ip_block', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveIpBlockRequest.from_dict(d.pop("resource"))

        remove_ip_block_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_ip_block_envelope
