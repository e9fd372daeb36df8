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
    from ..models.unsuspend_ftp_account_request import UnsuspendFtpAccountRequest


T = TypeVar("T", bound="UnsuspendFtpAccountEnvelope")


@_attrs_define
class UnsuspendFtpAccountEnvelope:
    """
    Attributes:
        operation (Literal['unsuspend_ftp_account']):
        request_id (str):
        resource (UnsuspendFtpAccountRequest):
    """

    operation: Literal["unsuspend_ftp_account"]
    request_id: str
    resource: UnsuspendFtpAccountRequest

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
        from ..models.unsuspend_ftp_account_request import UnsuspendFtpAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["unsuspend_ftp_account"], d.pop("operation"))
        if operation != "unsuspend_ftp_account":
            raise ValueError(
                f"operation must match const 'unsuspend_ftp_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = UnsuspendFtpAccountRequest.from_dict(d.pop("resource"))

        unsuspend_ftp_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return unsuspend_ftp_account_envelope
