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
    from ..models.set_mail_catch_all_request import SetMailCatchAllRequest


T = TypeVar("T", bound="SetMailCatchAllEnvelope")


@_attrs_define
class SetMailCatchAllEnvelope:
    """
    Attributes:
        operation (Literal['set_mail_catch_all']):
        request_id (str):
        resource (SetMailCatchAllRequest):
    """

    operation: Literal["set_mail_catch_all"]
    request_id: str
    resource: SetMailCatchAllRequest

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
        from ..models.set_mail_catch_all_request import SetMailCatchAllRequest

        d = dict(src_dict)
        operation = cast(Literal["set_mail_catch_all"], d.pop("operation"))
        if operation != "set_mail_catch_all":
            raise ValueError(
                f"operation must match const 'set_mail_catch_all', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetMailCatchAllRequest.from_dict(d.pop("resource"))

        set_mail_catch_all_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_mail_catch_all_envelope
