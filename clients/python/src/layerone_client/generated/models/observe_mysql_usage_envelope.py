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
    from ..models.observe_mysql_usage_request import ObserveMysqlUsageRequest


T = TypeVar("T", bound="ObserveMysqlUsageEnvelope")


@_attrs_define
class ObserveMysqlUsageEnvelope:
    """
    Attributes:
        operation (Literal['observe_mysql_usage']):
        request_id (str):
        resource (ObserveMysqlUsageRequest): Names one existing account.
    """

    operation: Literal["observe_mysql_usage"]
    request_id: str
    resource: ObserveMysqlUsageRequest

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
        from ..models.observe_mysql_usage_request import ObserveMysqlUsageRequest

        d = dict(src_dict)
        operation = cast(Literal["observe_mysql_usage"], d.pop("operation"))
        if operation != "observe_mysql_usage":
            raise ValueError(
                f"operation must match const 'observe_mysql_usage', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = ObserveMysqlUsageRequest.from_dict(d.pop("resource"))

        observe_mysql_usage_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return observe_mysql_usage_envelope
