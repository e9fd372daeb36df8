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
    from ..models.ensure_ssh_key_request import EnsureSshKeyRequest


T = TypeVar("T", bound="EnsureSshKeyEnvelope")


@_attrs_define
class EnsureSshKeyEnvelope:
    """
    Attributes:
        operation (Literal['ensure_ssh_key']):
        request_id (str):
        resource (EnsureSshKeyRequest):
    """

    operation: Literal["ensure_ssh_key"]
    request_id: str
    resource: EnsureSshKeyRequest

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
        from ..models.ensure_ssh_key_request import EnsureSshKeyRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_ssh_key"], d.pop("operation"))
        if operation != "ensure_ssh_key":
            raise ValueError(
                f"operation must match const 'ensure_ssh_key', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureSshKeyRequest.from_dict(d.pop("resource"))

        ensure_ssh_key_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_ssh_key_envelope
