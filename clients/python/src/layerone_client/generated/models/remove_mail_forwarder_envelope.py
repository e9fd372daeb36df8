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
    from ..models.remove_mail_forwarder_request import RemoveMailForwarderRequest


T = TypeVar("T", bound="RemoveMailForwarderEnvelope")


@_attrs_define
class RemoveMailForwarderEnvelope:
    """
    Attributes:
        operation (Literal['remove_mail_forwarder']):
        request_id (str):
        resource (RemoveMailForwarderRequest):
    """

    operation: Literal["remove_mail_forwarder"]
    request_id: str
    resource: RemoveMailForwarderRequest

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
        from ..models.remove_mail_forwarder_request import RemoveMailForwarderRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_mail_forwarder"], d.pop("operation"))
        if operation != "remove_mail_forwarder":
            raise ValueError(
                f"operation must match const 'remove_mail_forwarder', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveMailForwarderRequest.from_dict(d.pop("resource"))

        remove_mail_forwarder_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_mail_forwarder_envelope
