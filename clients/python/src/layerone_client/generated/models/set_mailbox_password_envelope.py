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
    from ..models.set_mailbox_password_request import SetMailboxPasswordRequest


T = TypeVar("T", bound="SetMailboxPasswordEnvelope")


@_attrs_define
class SetMailboxPasswordEnvelope:
    """
    Attributes:
        operation (Literal['set_mailbox_password']):
        request_id (str):
        resource (SetMailboxPasswordRequest):
    """

    operation: Literal["set_mailbox_password"]
    request_id: str
    resource: SetMailboxPasswordRequest

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
        from ..models.set_mailbox_password_request import SetMailboxPasswordRequest

        d = dict(src_dict)
        operation = cast(Literal["set_mailbox_password"], d.pop("operation"))
        if operation != "set_mailbox_password":
            raise ValueError(
                f"operation must match const 'set_mailbox_password', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetMailboxPasswordRequest.from_dict(d.pop("resource"))

        set_mailbox_password_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_mailbox_password_envelope
