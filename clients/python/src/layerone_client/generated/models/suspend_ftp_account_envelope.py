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
    from ..models.suspend_ftp_account_request import SuspendFtpAccountRequest


T = TypeVar("T", bound="SuspendFtpAccountEnvelope")


@_attrs_define
class SuspendFtpAccountEnvelope:
    """
    Attributes:
        operation (Literal['suspend_ftp_account']):
        request_id (str):
        resource (SuspendFtpAccountRequest):
    """

    operation: Literal["suspend_ftp_account"]
    request_id: str
    resource: SuspendFtpAccountRequest

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
        from ..models.suspend_ftp_account_request import SuspendFtpAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["suspend_ftp_account"], d.pop("operation"))
        if operation != "suspend_ftp_account":
            raise ValueError(
                f"operation must match const 'suspend_ftp_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SuspendFtpAccountRequest.from_dict(d.pop("resource"))

        suspend_ftp_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return suspend_ftp_account_envelope
