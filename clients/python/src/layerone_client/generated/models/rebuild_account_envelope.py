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
    from ..models.rebuild_account_request import RebuildAccountRequest


T = TypeVar("T", bound="RebuildAccountEnvelope")


@_attrs_define
class RebuildAccountEnvelope:
    """
    Attributes:
        operation (Literal['rebuild_account']):
        request_id (str):
        resource (RebuildAccountRequest): Names one existing account.
    """

    operation: Literal["rebuild_account"]
    request_id: str
    resource: RebuildAccountRequest

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
        from ..models.rebuild_account_request import RebuildAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["rebuild_account"], d.pop("operation"))
        if operation != "rebuild_account":
            raise ValueError(
                f"operation must match const 'rebuild_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RebuildAccountRequest.from_dict(d.pop("resource"))

        rebuild_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return rebuild_account_envelope
