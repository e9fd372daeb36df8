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
    from ..models.suspend_mailbox_request import SuspendMailboxRequest


T = TypeVar("T", bound="SuspendMailboxEnvelope")


@_attrs_define
class SuspendMailboxEnvelope:
    """
    Attributes:
        operation (Literal['suspend_mailbox']):
        request_id (str):
        resource (SuspendMailboxRequest):
    """

    operation: Literal["suspend_mailbox"]
    request_id: str
    resource: SuspendMailboxRequest

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
        from ..models.suspend_mailbox_request import SuspendMailboxRequest

        d = dict(src_dict)
        operation = cast(Literal["suspend_mailbox"], d.pop("operation"))
        if operation != "suspend_mailbox":
            raise ValueError(
                f"operation must match const 'suspend_mailbox', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SuspendMailboxRequest.from_dict(d.pop("resource"))

        suspend_mailbox_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return suspend_mailbox_envelope
