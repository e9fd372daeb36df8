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
    from ..models.remove_certificate_request import RemoveCertificateRequest


T = TypeVar("T", bound="RemoveCertificateEnvelope")


@_attrs_define
class RemoveCertificateEnvelope:
    """
    Attributes:
        operation (Literal['remove_certificate']):
        request_id (str):
        resource (RemoveCertificateRequest):
    """

    operation: Literal["remove_certificate"]
    request_id: str
    resource: RemoveCertificateRequest

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
        from ..models.remove_certificate_request import RemoveCertificateRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_certificate"], d.pop("operation"))
        if operation != "remove_certificate":
            raise ValueError(
                f"operation must match const 'remove_certificate', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveCertificateRequest.from_dict(d.pop("resource"))

        remove_certificate_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_certificate_envelope
