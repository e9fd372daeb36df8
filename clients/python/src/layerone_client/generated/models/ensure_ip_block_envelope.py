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
    from ..models.ensure_ip_block_request import EnsureIpBlockRequest


T = TypeVar("T", bound="EnsureIpBlockEnvelope")


@_attrs_define
class EnsureIpBlockEnvelope:
    """
    Attributes:
        operation (Literal['ensure_ip_block']):
        request_id (str):
        resource (EnsureIpBlockRequest):
    """

    operation: Literal["ensure_ip_block"]
    request_id: str
    resource: EnsureIpBlockRequest

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
        from ..models.ensure_ip_block_request import EnsureIpBlockRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_ip_block"], d.pop("operation"))
        if operation != "ensure_ip_block":
            raise ValueError(
                f"operation must match const 'ensure_ip_block', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureIpBlockRequest.from_dict(d.pop("resource"))

        ensure_ip_block_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_ip_block_envelope
