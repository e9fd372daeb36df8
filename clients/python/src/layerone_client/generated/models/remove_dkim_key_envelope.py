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
    from ..models.remove_dkim_key_request import RemoveDkimKeyRequest


T = TypeVar("T", bound="RemoveDkimKeyEnvelope")


@_attrs_define
class RemoveDkimKeyEnvelope:
    """
    Attributes:
        operation (Literal['remove_dkim_key']):
        request_id (str):
        resource (RemoveDkimKeyRequest):
    """

    operation: Literal["remove_dkim_key"]
    request_id: str
    resource: RemoveDkimKeyRequest

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
        from ..models.remove_dkim_key_request import RemoveDkimKeyRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_dkim_key"], d.pop("operation"))
        if operation != "remove_dkim_key":
            raise ValueError(
                f"operation must match const 'remove_dkim_key', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveDkimKeyRequest.from_dict(d.pop("resource"))

        remove_dkim_key_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_dkim_key_envelope
