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
    from ..models.remove_mailbox_request import RemoveMailboxRequest


T = TypeVar("T", bound="RemoveMailboxEnvelope")


@_attrs_define
class RemoveMailboxEnvelope:
    """
    Attributes:
        operation (Literal['remove_mailbox']):
        request_id (str):
        resource (RemoveMailboxRequest):
    """

    operation: Literal["remove_mailbox"]
    request_id: str
    resource: RemoveMailboxRequest

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
        from ..models.remove_mailbox_request import RemoveMailboxRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_mailbox"], d.pop("operation"))
        if operation != "remove_mailbox":
            raise ValueError(
                f"operation must match const 'remove_mailbox', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveMailboxRequest.from_dict(d.pop("resource"))

        remove_mailbox_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_mailbox_envelope
