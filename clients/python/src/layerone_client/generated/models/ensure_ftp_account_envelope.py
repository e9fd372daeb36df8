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
    from ..models.ensure_ftp_account_request import EnsureFtpAccountRequest


T = TypeVar("T", bound="EnsureFtpAccountEnvelope")


@_attrs_define
class EnsureFtpAccountEnvelope:
    """
    Attributes:
        operation (Literal['ensure_ftp_account']):
        request_id (str):
        resource (EnsureFtpAccountRequest):
    """

    operation: Literal["ensure_ftp_account"]
    request_id: str
    resource: EnsureFtpAccountRequest

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
        from ..models.ensure_ftp_account_request import EnsureFtpAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_ftp_account"], d.pop("operation"))
        if operation != "ensure_ftp_account":
            raise ValueError(
                f"operation must match const 'ensure_ftp_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureFtpAccountRequest.from_dict(d.pop("resource"))

        ensure_ftp_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_ftp_account_envelope
