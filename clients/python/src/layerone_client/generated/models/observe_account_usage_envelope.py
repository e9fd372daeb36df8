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
    from ..models.observe_account_usage_request import ObserveAccountUsageRequest


T = TypeVar("T", bound="ObserveAccountUsageEnvelope")


@_attrs_define
class ObserveAccountUsageEnvelope:
    """
    Attributes:
        operation (Literal['observe_account_usage']):
        request_id (str):
        resource (ObserveAccountUsageRequest): Names one existing account.
    """

    operation: Literal["observe_account_usage"]
    request_id: str
    resource: ObserveAccountUsageRequest

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
        from ..models.observe_account_usage_request import ObserveAccountUsageRequest

        d = dict(src_dict)
        operation = cast(Literal["observe_account_usage"], d.pop("operation"))
        if operation != "observe_account_usage":
            raise ValueError(
                f"operation must match const 'observe_account_usage', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = ObserveAccountUsageRequest.from_dict(d.pop("resource"))

        observe_account_usage_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return observe_account_usage_envelope
