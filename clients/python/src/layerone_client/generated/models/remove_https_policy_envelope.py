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
    from ..models.remove_https_policy_request import RemoveHttpsPolicyRequest


T = TypeVar("T", bound="RemoveHttpsPolicyEnvelope")


@_attrs_define
class RemoveHttpsPolicyEnvelope:
    """
    Attributes:
        operation (Literal['remove_https_policy']):
        request_id (str):
        resource (RemoveHttpsPolicyRequest):
    """

    operation: Literal["remove_https_policy"]
    request_id: str
    resource: RemoveHttpsPolicyRequest

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
        from ..models.remove_https_policy_request import RemoveHttpsPolicyRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_https_policy"], d.pop("operation"))
        if operation != "remove_https_policy":
            raise ValueError(
                f"operation must match const 'remove_https_policy', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveHttpsPolicyRequest.from_dict(d.pop("resource"))

        remove_https_policy_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_https_policy_envelope
