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
    from ..models.set_https_policy_request import SetHttpsPolicyRequest


T = TypeVar("T", bound="SetHttpsPolicyEnvelope")


@_attrs_define
class SetHttpsPolicyEnvelope:
    """
    Attributes:
        operation (Literal['set_https_policy']):
        request_id (str):
        resource (SetHttpsPolicyRequest):
    """

    operation: Literal["set_https_policy"]
    request_id: str
    resource: SetHttpsPolicyRequest

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
        from ..models.set_https_policy_request import SetHttpsPolicyRequest

        d = dict(src_dict)
        operation = cast(Literal["set_https_policy"], d.pop("operation"))
        if operation != "set_https_policy":
            raise ValueError(
                f"operation must match const 'set_https_policy', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetHttpsPolicyRequest.from_dict(d.pop("resource"))

        set_https_policy_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_https_policy_envelope
