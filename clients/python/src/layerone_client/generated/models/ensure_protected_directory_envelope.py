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
    from ..models.ensure_protected_directory_request import (
        EnsureProtectedDirectoryRequest,
    )


T = TypeVar("T", bound="EnsureProtectedDirectoryEnvelope")


@_attrs_define
class EnsureProtectedDirectoryEnvelope:
    """
    Attributes:
        operation (Literal['ensure_protected_directory']):
        request_id (str):
        resource (EnsureProtectedDirectoryRequest):
    """

    operation: Literal["ensure_protected_directory"]
    request_id: str
    resource: EnsureProtectedDirectoryRequest

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
        from ..models.ensure_protected_directory_request import (
            EnsureProtectedDirectoryRequest,
        )

        d = dict(src_dict)
        operation = cast(Literal["ensure_protected_directory"], d.pop("operation"))
        if operation != "ensure_protected_directory":
            raise ValueError(
                f"operation must match const 'ensure_protected_directory', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureProtectedDirectoryRequest.from_dict(d.pop("resource"))

        ensure_protected_directory_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_protected_directory_envelope
