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
    from ..models.ensure_account_request import EnsureAccountRequest


T = TypeVar("T", bound="EnsureAccountEnvelope")


@_attrs_define
class EnsureAccountEnvelope:
    """
    Attributes:
        operation (Literal['ensure_account']):
        request_id (str):
        resource (EnsureAccountRequest): Create or converge a tenant's account.
    """

    operation: Literal["ensure_account"]
    request_id: str
    resource: EnsureAccountRequest

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
        from ..models.ensure_account_request import EnsureAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_account"], d.pop("operation"))
        if operation != "ensure_account":
            raise ValueError(
                f"operation must match const 'ensure_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureAccountRequest.from_dict(d.pop("resource"))

        ensure_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_account_envelope
