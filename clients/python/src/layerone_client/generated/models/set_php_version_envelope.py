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
    from ..models.set_php_version_request import SetPhpVersionRequest


T = TypeVar("T", bound="SetPhpVersionEnvelope")


@_attrs_define
class SetPhpVersionEnvelope:
    """
    Attributes:
        operation (Literal['set_php_version']):
        request_id (str):
        resource (SetPhpVersionRequest):
    """

    operation: Literal["set_php_version"]
    request_id: str
    resource: SetPhpVersionRequest

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
        from ..models.set_php_version_request import SetPhpVersionRequest

        d = dict(src_dict)
        operation = cast(Literal["set_php_version"], d.pop("operation"))
        if operation != "set_php_version":
            raise ValueError(
                f"operation must match const 'set_php_version', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetPhpVersionRequest.from_dict(d.pop("resource"))

        set_php_version_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_php_version_envelope
