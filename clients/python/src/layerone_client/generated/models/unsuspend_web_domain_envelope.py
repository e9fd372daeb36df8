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
    from ..models.unsuspend_web_domain_request import UnsuspendWebDomainRequest


T = TypeVar("T", bound="UnsuspendWebDomainEnvelope")


@_attrs_define
class UnsuspendWebDomainEnvelope:
    """
    Attributes:
        operation (Literal['unsuspend_web_domain']):
        request_id (str):
        resource (UnsuspendWebDomainRequest):
    """

    operation: Literal["unsuspend_web_domain"]
    request_id: str
    resource: UnsuspendWebDomainRequest

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
        from ..models.unsuspend_web_domain_request import UnsuspendWebDomainRequest

        d = dict(src_dict)
        operation = cast(Literal["unsuspend_web_domain"], d.pop("operation"))
        if operation != "unsuspend_web_domain":
            raise ValueError(
                f"operation must match const 'unsuspend_web_domain', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = UnsuspendWebDomainRequest.from_dict(d.pop("resource"))

        unsuspend_web_domain_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return unsuspend_web_domain_envelope
