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
    from ..models.remove_scheduled_task_request import RemoveScheduledTaskRequest


T = TypeVar("T", bound="RemoveScheduledTaskEnvelope")


@_attrs_define
class RemoveScheduledTaskEnvelope:
    """
    Attributes:
        operation (Literal['remove_scheduled_task']):
        request_id (str):
        resource (RemoveScheduledTaskRequest):
    """

    operation: Literal["remove_scheduled_task"]
    request_id: str
    resource: RemoveScheduledTaskRequest

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
        from ..models.remove_scheduled_task_request import RemoveScheduledTaskRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_scheduled_task"], d.pop("operation"))
        if operation != "remove_scheduled_task":
            raise ValueError(
                f"operation must match const 'remove_scheduled_task', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveScheduledTaskRequest.from_dict(d.pop("resource"))

        remove_scheduled_task_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_scheduled_task_envelope
