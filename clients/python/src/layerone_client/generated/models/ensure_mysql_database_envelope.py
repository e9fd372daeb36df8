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
    from ..models.ensure_mysql_database_request import EnsureMysqlDatabaseRequest


T = TypeVar("T", bound="EnsureMysqlDatabaseEnvelope")


@_attrs_define
class EnsureMysqlDatabaseEnvelope:
    """
    Attributes:
        operation (Literal['ensure_mysql_database']):
        request_id (str):
        resource (EnsureMysqlDatabaseRequest):
    """

    operation: Literal["ensure_mysql_database"]
    request_id: str
    resource: EnsureMysqlDatabaseRequest

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
        from ..models.ensure_mysql_database_request import EnsureMysqlDatabaseRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_mysql_database"], d.pop("operation"))
        if operation != "ensure_mysql_database":
            raise ValueError(
                f"operation must match const 'ensure_mysql_database', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureMysqlDatabaseRequest.from_dict(d.pop("resource"))

        ensure_mysql_database_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_mysql_database_envelope
