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
    from ..models.renew_certificate_request import RenewCertificateRequest


T = TypeVar("T", bound="RenewCertificateEnvelope")


@_attrs_define
class RenewCertificateEnvelope:
    """
    Attributes:
        operation (Literal['renew_certificate']):
        request_id (str):
        resource (RenewCertificateRequest):
    """

    operation: Literal["renew_certificate"]
    request_id: str
    resource: RenewCertificateRequest

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
        from ..models.renew_certificate_request import RenewCertificateRequest

        d = dict(src_dict)
        operation = cast(Literal["renew_certificate"], d.pop("operation"))
        if operation != "renew_certificate":
            raise ValueError(
                f"operation must match const 'renew_certificate', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RenewCertificateRequest.from_dict(d.pop("resource"))

        renew_certificate_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return renew_certificate_envelope
