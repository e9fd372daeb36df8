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
    from ..models.set_mysql_quota_request import SetMysqlQuotaRequest


T = TypeVar("T", bound="SetMysqlQuotaEnvelope")


@_attrs_define
class SetMysqlQuotaEnvelope:
    """
    Attributes:
        operation (Literal['set_mysql_quota']):
        request_id (str):
        resource (SetMysqlQuotaRequest): The account's MySQL limit. `id` is the account's id: one quota per account.
    """

    operation: Literal["set_mysql_quota"]
    request_id: str
    resource: SetMysqlQuotaRequest

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
        from ..models.set_mysql_quota_request import SetMysqlQuotaRequest

        d = dict(src_dict)
        operation = cast(Literal["set_mysql_quota"], d.pop("operation"))
        if operation != "set_mysql_quota":
            raise ValueError(
                f"operation must match const 'set_mysql_quota', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetMysqlQuotaRequest.from_dict(d.pop("resource"))

        set_mysql_quota_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_mysql_quota_envelope
