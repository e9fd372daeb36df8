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
    from ..models.unsuspend_mailbox_request import UnsuspendMailboxRequest


T = TypeVar("T", bound="UnsuspendMailboxEnvelope")


@_attrs_define
class UnsuspendMailboxEnvelope:
    """
    Attributes:
        operation (Literal['unsuspend_mailbox']):
        request_id (str):
        resource (UnsuspendMailboxRequest):
    """

    operation: Literal["unsuspend_mailbox"]
    request_id: str
    resource: UnsuspendMailboxRequest

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
        from ..models.unsuspend_mailbox_request import UnsuspendMailboxRequest

        d = dict(src_dict)
        operation = cast(Literal["unsuspend_mailbox"], d.pop("operation"))
        if operation != "unsuspend_mailbox":
            raise ValueError(
                f"operation must match const 'unsuspend_mailbox', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = UnsuspendMailboxRequest.from_dict(d.pop("resource"))

        unsuspend_mailbox_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return unsuspend_mailbox_envelope
