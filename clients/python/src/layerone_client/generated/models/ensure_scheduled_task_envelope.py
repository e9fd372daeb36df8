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
    from ..models.ensure_scheduled_task_request import EnsureScheduledTaskRequest


T = TypeVar("T", bound="EnsureScheduledTaskEnvelope")


@_attrs_define
class EnsureScheduledTaskEnvelope:
    """
    Attributes:
        operation (Literal['ensure_scheduled_task']):
        request_id (str):
        resource (EnsureScheduledTaskRequest):
    """

    operation: Literal["ensure_scheduled_task"]
    request_id: str
    resource: EnsureScheduledTaskRequest

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
        from ..models.ensure_scheduled_task_request import EnsureScheduledTaskRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_scheduled_task"], d.pop("operation"))
        if operation != "ensure_scheduled_task":
            raise ValueError(
                f"operation must match const 'ensure_scheduled_task', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureScheduledTaskRequest.from_dict(d.pop("resource"))

        ensure_scheduled_task_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_scheduled_task_envelope
