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
    from ..models.suspend_web_domain_request import SuspendWebDomainRequest


T = TypeVar("T", bound="SuspendWebDomainEnvelope")


@_attrs_define
class SuspendWebDomainEnvelope:
    """
    Attributes:
        operation (Literal['suspend_web_domain']):
        request_id (str):
        resource (SuspendWebDomainRequest):
    """

    operation: Literal["suspend_web_domain"]
    request_id: str
    resource: SuspendWebDomainRequest

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
        from ..models.suspend_web_domain_request import SuspendWebDomainRequest

        d = dict(src_dict)
        operation = cast(Literal["suspend_web_domain"], d.pop("operation"))
        if operation != "suspend_web_domain":
            raise ValueError(
                f"operation must match const 'suspend_web_domain', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SuspendWebDomainRequest.from_dict(d.pop("resource"))

        suspend_web_domain_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return suspend_web_domain_envelope
