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
    from ..models.ensure_mail_domain_request import EnsureMailDomainRequest


T = TypeVar("T", bound="EnsureMailDomainEnvelope")


@_attrs_define
class EnsureMailDomainEnvelope:
    """
    Attributes:
        operation (Literal['ensure_mail_domain']):
        request_id (str):
        resource (EnsureMailDomainRequest):
    """

    operation: Literal["ensure_mail_domain"]
    request_id: str
    resource: EnsureMailDomainRequest

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
        from ..models.ensure_mail_domain_request import EnsureMailDomainRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_mail_domain"], d.pop("operation"))
        if operation != "ensure_mail_domain":
            raise ValueError(
                f"operation must match const 'ensure_mail_domain', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureMailDomainRequest.from_dict(d.pop("resource"))

        ensure_mail_domain_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_mail_domain_envelope
