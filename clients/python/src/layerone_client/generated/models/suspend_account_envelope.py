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
    from ..models.suspend_account_request import SuspendAccountRequest


T = TypeVar("T", bound="SuspendAccountEnvelope")


@_attrs_define
class SuspendAccountEnvelope:
    """
    Attributes:
        operation (Literal['suspend_account']):
        request_id (str):
        resource (SuspendAccountRequest): Names one existing account.
    """

    operation: Literal["suspend_account"]
    request_id: str
    resource: SuspendAccountRequest

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
        from ..models.suspend_account_request import SuspendAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["suspend_account"], d.pop("operation"))
        if operation != "suspend_account":
            raise ValueError(
                f"operation must match const 'suspend_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SuspendAccountRequest.from_dict(d.pop("resource"))

        suspend_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return suspend_account_envelope
