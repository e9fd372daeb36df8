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
    from ..models.set_account_isolation_request import SetAccountIsolationRequest


T = TypeVar("T", bound="SetAccountIsolationEnvelope")


@_attrs_define
class SetAccountIsolationEnvelope:
    """
    Attributes:
        operation (Literal['set_account_isolation']):
        request_id (str):
        resource (SetAccountIsolationRequest): Puts an account into its CageFS, or takes it out.
    """

    operation: Literal["set_account_isolation"]
    request_id: str
    resource: SetAccountIsolationRequest

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
        from ..models.set_account_isolation_request import SetAccountIsolationRequest

        d = dict(src_dict)
        operation = cast(Literal["set_account_isolation"], d.pop("operation"))
        if operation != "set_account_isolation":
            raise ValueError(
                f"operation must match const 'set_account_isolation', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetAccountIsolationRequest.from_dict(d.pop("resource"))

        set_account_isolation_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_account_isolation_envelope
