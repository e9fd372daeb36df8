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
    from ..models.remove_web_domain_request import RemoveWebDomainRequest


T = TypeVar("T", bound="RemoveWebDomainEnvelope")


@_attrs_define
class RemoveWebDomainEnvelope:
    """
    Attributes:
        operation (Literal['remove_web_domain']):
        request_id (str):
        resource (RemoveWebDomainRequest):
    """

    operation: Literal["remove_web_domain"]
    request_id: str
    resource: RemoveWebDomainRequest

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
        from ..models.remove_web_domain_request import RemoveWebDomainRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_web_domain"], d.pop("operation"))
        if operation != "remove_web_domain":
            raise ValueError(
                f"operation must match const 'remove_web_domain', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveWebDomainRequest.from_dict(d.pop("resource"))

        remove_web_domain_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_web_domain_envelope
