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
    from ..models.remove_mysql_user_request import RemoveMysqlUserRequest


T = TypeVar("T", bound="RemoveMysqlUserEnvelope")


@_attrs_define
class RemoveMysqlUserEnvelope:
    """
    Attributes:
        operation (Literal['remove_mysql_user']):
        request_id (str):
        resource (RemoveMysqlUserRequest):
    """

    operation: Literal["remove_mysql_user"]
    request_id: str
    resource: RemoveMysqlUserRequest

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
        from ..models.remove_mysql_user_request import RemoveMysqlUserRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_mysql_user"], d.pop("operation"))
        if operation != "remove_mysql_user":
            raise ValueError(
                f"operation must match const 'remove_mysql_user', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveMysqlUserRequest.from_dict(d.pop("resource"))

        remove_mysql_user_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_mysql_user_envelope
