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
    from ..models.remove_account_request import RemoveAccountRequest


T = TypeVar("T", bound="RemoveAccountEnvelope")


@_attrs_define
class RemoveAccountEnvelope:
    """
    Attributes:
        operation (Literal['remove_account']):
        request_id (str):
        resource (RemoveAccountRequest): Names one existing account.
    """

    operation: Literal["remove_account"]
    request_id: str
    resource: RemoveAccountRequest

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
        from ..models.remove_account_request import RemoveAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_account"], d.pop("operation"))
        if operation != "remove_account":
            raise ValueError(
                f"operation must match const 'remove_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveAccountRequest.from_dict(d.pop("resource"))

        remove_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_account_envelope
