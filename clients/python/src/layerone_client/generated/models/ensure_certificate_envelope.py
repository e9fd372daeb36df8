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
    from ..models.ensure_certificate_request import EnsureCertificateRequest


T = TypeVar("T", bound="EnsureCertificateEnvelope")


@_attrs_define
class EnsureCertificateEnvelope:
    """
    Attributes:
        operation (Literal['ensure_certificate']):
        request_id (str):
        resource (EnsureCertificateRequest):
    """

    operation: Literal["ensure_certificate"]
    request_id: str
    resource: EnsureCertificateRequest

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
        from ..models.ensure_certificate_request import EnsureCertificateRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_certificate"], d.pop("operation"))
        if operation != "ensure_certificate":
            raise ValueError(
                f"operation must match const 'ensure_certificate', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureCertificateRequest.from_dict(d.pop("resource"))

        ensure_certificate_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_certificate_envelope
