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
    from ..models.ensure_web_domain_request import EnsureWebDomainRequest


T = TypeVar("T", bound="EnsureWebDomainEnvelope")


@_attrs_define
class EnsureWebDomainEnvelope:
    """
    Attributes:
        operation (Literal['ensure_web_domain']):
        request_id (str):
        resource (EnsureWebDomainRequest):
    """

    operation: Literal["ensure_web_domain"]
    request_id: str
    resource: EnsureWebDomainRequest

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
        from ..models.ensure_web_domain_request import EnsureWebDomainRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_web_domain"], d.pop("operation"))
        if operation != "ensure_web_domain":
            raise ValueError(
                f"operation must match const 'ensure_web_domain', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureWebDomainRequest.from_dict(d.pop("resource"))

        ensure_web_domain_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_web_domain_envelope
