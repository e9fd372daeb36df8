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
    from ..models.set_mysql_user_password_request import SetMysqlUserPasswordRequest


T = TypeVar("T", bound="SetMysqlUserPasswordEnvelope")


@_attrs_define
class SetMysqlUserPasswordEnvelope:
    """
    Attributes:
        operation (Literal['set_mysql_user_password']):
        request_id (str):
        resource (SetMysqlUserPasswordRequest):
    """

    operation: Literal["set_mysql_user_password"]
    request_id: str
    resource: SetMysqlUserPasswordRequest

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
        from ..models.set_mysql_user_password_request import SetMysqlUserPasswordRequest

        d = dict(src_dict)
        operation = cast(Literal["set_mysql_user_password"], d.pop("operation"))
        if operation != "set_mysql_user_password":
            raise ValueError(
                f"operation must match const 'set_mysql_user_password', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetMysqlUserPasswordRequest.from_dict(d.pop("resource"))

        set_mysql_user_password_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_mysql_user_password_envelope
