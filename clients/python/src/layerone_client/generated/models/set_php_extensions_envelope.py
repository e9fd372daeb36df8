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
    from ..models.set_php_extensions_request import SetPhpExtensionsRequest


T = TypeVar("T", bound="SetPhpExtensionsEnvelope")


@_attrs_define
class SetPhpExtensionsEnvelope:
    """
    Attributes:
        operation (Literal['set_php_extensions']):
        request_id (str):
        resource (SetPhpExtensionsRequest):
    """

    operation: Literal["set_php_extensions"]
    request_id: str
    resource: SetPhpExtensionsRequest

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
        from ..models.set_php_extensions_request import SetPhpExtensionsRequest

        d = dict(src_dict)
        operation = cast(Literal["set_php_extensions"], d.pop("operation"))
        if operation != "set_php_extensions":
            raise ValueError(
                f"operation must match const 'set_php_extensions', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetPhpExtensionsRequest.from_dict(d.pop("resource"))

        set_php_extensions_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_php_extensions_envelope
