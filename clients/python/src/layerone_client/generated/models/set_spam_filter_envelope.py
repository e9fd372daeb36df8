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
    from ..models.set_spam_filter_request import SetSpamFilterRequest


T = TypeVar("T", bound="SetSpamFilterEnvelope")


@_attrs_define
class SetSpamFilterEnvelope:
    """
    Attributes:
        operation (Literal['set_spam_filter']):
        request_id (str):
        resource (SetSpamFilterRequest):
    """

    operation: Literal["set_spam_filter"]
    request_id: str
    resource: SetSpamFilterRequest

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
        from ..models.set_spam_filter_request import SetSpamFilterRequest

        d = dict(src_dict)
        operation = cast(Literal["set_spam_filter"], d.pop("operation"))
        if operation != "set_spam_filter":
            raise ValueError(
                f"operation must match const 'set_spam_filter', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetSpamFilterRequest.from_dict(d.pop("resource"))

        set_spam_filter_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_spam_filter_envelope
