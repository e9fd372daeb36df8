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
    from ..models.ensure_mysql_grant_request import EnsureMysqlGrantRequest


T = TypeVar("T", bound="EnsureMysqlGrantEnvelope")


@_attrs_define
class EnsureMysqlGrantEnvelope:
    """
    Attributes:
        operation (Literal['ensure_mysql_grant']):
        request_id (str):
        resource (EnsureMysqlGrantRequest):
    """

    operation: Literal["ensure_mysql_grant"]
    request_id: str
    resource: EnsureMysqlGrantRequest

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
        from ..models.ensure_mysql_grant_request import EnsureMysqlGrantRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_mysql_grant"], d.pop("operation"))
        if operation != "ensure_mysql_grant":
            raise ValueError(
                f"operation must match const 'ensure_mysql_grant', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureMysqlGrantRequest.from_dict(d.pop("resource"))

        ensure_mysql_grant_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_mysql_grant_envelope
