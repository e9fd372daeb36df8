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
    from ..models.remove_autoresponder_request import RemoveAutoresponderRequest


T = TypeVar("T", bound="RemoveAutoresponderEnvelope")


@_attrs_define
class RemoveAutoresponderEnvelope:
    """
    Attributes:
        operation (Literal['remove_autoresponder']):
        request_id (str):
        resource (RemoveAutoresponderRequest):
    """

    operation: Literal["remove_autoresponder"]
    request_id: str
    resource: RemoveAutoresponderRequest

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
        from ..models.remove_autoresponder_request import RemoveAutoresponderRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_autoresponder"], d.pop("operation"))
        if operation != "remove_autoresponder":
            raise ValueError(
                f"operation must match const 'remove_autoresponder', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveAutoresponderRequest.from_dict(d.pop("resource"))

        remove_autoresponder_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_autoresponder_envelope
