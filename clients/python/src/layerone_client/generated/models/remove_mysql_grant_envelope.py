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
    from ..models.remove_mysql_grant_request import RemoveMysqlGrantRequest


T = TypeVar("T", bound="RemoveMysqlGrantEnvelope")


@_attrs_define
class RemoveMysqlGrantEnvelope:
    """
    Attributes:
        operation (Literal['remove_mysql_grant']):
        request_id (str):
        resource (RemoveMysqlGrantRequest):
    """

    operation: Literal["remove_mysql_grant"]
    request_id: str
    resource: RemoveMysqlGrantRequest

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
        from ..models.remove_mysql_grant_request import RemoveMysqlGrantRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_mysql_grant"], d.pop("operation"))
        if operation != "remove_mysql_grant":
            raise ValueError(
                f"operation must match const 'remove_mysql_grant', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveMysqlGrantRequest.from_dict(d.pop("resource"))

        remove_mysql_grant_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_mysql_grant_envelope
