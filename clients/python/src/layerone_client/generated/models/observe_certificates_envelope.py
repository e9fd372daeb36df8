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
    from ..models.observe_certificates_request import ObserveCertificatesRequest


T = TypeVar("T", bound="ObserveCertificatesEnvelope")


@_attrs_define
class ObserveCertificatesEnvelope:
    """
    Attributes:
        operation (Literal['observe_certificates']):
        request_id (str):
        resource (ObserveCertificatesRequest): Names one existing account.
    """

    operation: Literal["observe_certificates"]
    request_id: str
    resource: ObserveCertificatesRequest

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
        from ..models.observe_certificates_request import ObserveCertificatesRequest

        d = dict(src_dict)
        operation = cast(Literal["observe_certificates"], d.pop("operation"))
        if operation != "observe_certificates":
            raise ValueError(
                f"operation must match const 'observe_certificates', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = ObserveCertificatesRequest.from_dict(d.pop("resource"))

        observe_certificates_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return observe_certificates_envelope
