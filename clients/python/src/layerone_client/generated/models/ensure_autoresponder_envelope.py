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
    from ..models.ensure_autoresponder_request import EnsureAutoresponderRequest


T = TypeVar("T", bound="EnsureAutoresponderEnvelope")


@_attrs_define
class EnsureAutoresponderEnvelope:
    """
    Attributes:
        operation (Literal['ensure_autoresponder']):
        request_id (str):
        resource (EnsureAutoresponderRequest):
    """

    operation: Literal["ensure_autoresponder"]
    request_id: str
    resource: EnsureAutoresponderRequest

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
        from ..models.ensure_autoresponder_request import EnsureAutoresponderRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_autoresponder"], d.pop("operation"))
        if operation != "ensure_autoresponder":
            raise ValueError(
                f"operation must match const 'ensure_autoresponder', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureAutoresponderRequest.from_dict(d.pop("resource"))

        ensure_autoresponder_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_autoresponder_envelope
