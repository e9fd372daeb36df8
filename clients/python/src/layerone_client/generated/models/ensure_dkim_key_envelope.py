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
    from ..models.ensure_dkim_key_request import EnsureDkimKeyRequest


T = TypeVar("T", bound="EnsureDkimKeyEnvelope")


@_attrs_define
class EnsureDkimKeyEnvelope:
    """
    Attributes:
        operation (Literal['ensure_dkim_key']):
        request_id (str):
        resource (EnsureDkimKeyRequest):
    """

    operation: Literal["ensure_dkim_key"]
    request_id: str
    resource: EnsureDkimKeyRequest

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
        from ..models.ensure_dkim_key_request import EnsureDkimKeyRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_dkim_key"], d.pop("operation"))
        if operation != "ensure_dkim_key":
            raise ValueError(
                f"operation must match const 'ensure_dkim_key', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureDkimKeyRequest.from_dict(d.pop("resource"))

        ensure_dkim_key_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_dkim_key_envelope
