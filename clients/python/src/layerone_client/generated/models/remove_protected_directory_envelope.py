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
    from ..models.remove_protected_directory_request import (
        RemoveProtectedDirectoryRequest,
    )


T = TypeVar("T", bound="RemoveProtectedDirectoryEnvelope")


@_attrs_define
class RemoveProtectedDirectoryEnvelope:
    """
    Attributes:
        operation (Literal['remove_protected_directory']):
        request_id (str):
        resource (RemoveProtectedDirectoryRequest):
    """

    operation: Literal["remove_protected_directory"]
    request_id: str
    resource: RemoveProtectedDirectoryRequest

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
        from ..models.remove_protected_directory_request import (
            RemoveProtectedDirectoryRequest,
        )

        d = dict(src_dict)
        operation = cast(Literal["remove_protected_directory"], d.pop("operation"))
        if operation != "remove_protected_directory":
            raise ValueError(
                f"operation must match const 'remove_protected_directory', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveProtectedDirectoryRequest.from_dict(d.pop("resource"))

        remove_protected_directory_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_protected_directory_envelope
