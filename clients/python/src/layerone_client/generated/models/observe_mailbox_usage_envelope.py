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
    from ..models.observe_mailbox_usage_request import ObserveMailboxUsageRequest


T = TypeVar("T", bound="ObserveMailboxUsageEnvelope")


@_attrs_define
class ObserveMailboxUsageEnvelope:
    """
    Attributes:
        operation (Literal['observe_mailbox_usage']):
        request_id (str):
        resource (ObserveMailboxUsageRequest):
    """

    operation: Literal["observe_mailbox_usage"]
    request_id: str
    resource: ObserveMailboxUsageRequest

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
        from ..models.observe_mailbox_usage_request import ObserveMailboxUsageRequest

        d = dict(src_dict)
        operation = cast(Literal["observe_mailbox_usage"], d.pop("operation"))
        if operation != "observe_mailbox_usage":
            raise ValueError(
                f"operation must match const 'observe_mailbox_usage', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = ObserveMailboxUsageRequest.from_dict(d.pop("resource"))

        observe_mailbox_usage_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return observe_mailbox_usage_envelope
