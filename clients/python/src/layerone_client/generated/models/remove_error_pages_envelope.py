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
    from ..models.remove_error_pages_request import RemoveErrorPagesRequest


T = TypeVar("T", bound="RemoveErrorPagesEnvelope")


@_attrs_define
class RemoveErrorPagesEnvelope:
    """
    Attributes:
        operation (Literal['remove_error_pages']):
        request_id (str):
        resource (RemoveErrorPagesRequest):
    """

    operation: Literal["remove_error_pages"]
    request_id: str
    resource: RemoveErrorPagesRequest

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
        from ..models.remove_error_pages_request import RemoveErrorPagesRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_error_pages"], d.pop("operation"))
        if operation != "remove_error_pages":
            raise ValueError(
                f"operation must match const 'remove_error_pages', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveErrorPagesRequest.from_dict(d.pop("resource"))

        remove_error_pages_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_error_pages_envelope
