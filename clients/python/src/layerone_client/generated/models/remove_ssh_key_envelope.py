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
    from ..models.remove_ssh_key_request import RemoveSshKeyRequest


T = TypeVar("T", bound="RemoveSshKeyEnvelope")


@_attrs_define
class RemoveSshKeyEnvelope:
    """
    Attributes:
        operation (Literal['remove_ssh_key']):
        request_id (str):
        resource (RemoveSshKeyRequest):
    """

    operation: Literal["remove_ssh_key"]
    request_id: str
    resource: RemoveSshKeyRequest

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
        from ..models.remove_ssh_key_request import RemoveSshKeyRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_ssh_key"], d.pop("operation"))
        if operation != "remove_ssh_key":
            raise ValueError(
                f"operation must match const 'remove_ssh_key', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveSshKeyRequest.from_dict(d.pop("resource"))

        remove_ssh_key_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_ssh_key_envelope
