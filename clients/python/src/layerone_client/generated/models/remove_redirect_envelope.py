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
    from ..models.remove_redirect_request import RemoveRedirectRequest


T = TypeVar("T", bound="RemoveRedirectEnvelope")


@_attrs_define
class RemoveRedirectEnvelope:
    """
    Attributes:
        operation (Literal['remove_redirect']):
        request_id (str):
        resource (RemoveRedirectRequest):
    """

    operation: Literal["remove_redirect"]
    request_id: str
    resource: RemoveRedirectRequest

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
        from ..models.remove_redirect_request import RemoveRedirectRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_redirect"], d.pop("operation"))
        if operation != "remove_redirect":
            raise ValueError(
                f"operation must match const 'remove_redirect', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveRedirectRequest.from_dict(d.pop("resource"))

        remove_redirect_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_redirect_envelope
