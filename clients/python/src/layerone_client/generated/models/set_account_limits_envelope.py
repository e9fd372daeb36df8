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
    from ..models.set_account_limits_request import SetAccountLimitsRequest


T = TypeVar("T", bound="SetAccountLimitsEnvelope")


@_attrs_define
class SetAccountLimitsEnvelope:
    """
    Attributes:
        operation (Literal['set_account_limits']):
        request_id (str):
        resource (SetAccountLimitsRequest): An account's resource limits: CloudLinux's LVE on `cloudlinux`, the
            account's systemd
            slice (`user-<uid>.slice`) on `debian`.
    """

    operation: Literal["set_account_limits"]
    request_id: str
    resource: SetAccountLimitsRequest

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
        from ..models.set_account_limits_request import SetAccountLimitsRequest

        d = dict(src_dict)
        operation = cast(Literal["set_account_limits"], d.pop("operation"))
        if operation != "set_account_limits":
            raise ValueError(
                f"operation must match const 'set_account_limits', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = SetAccountLimitsRequest.from_dict(d.pop("resource"))

        set_account_limits_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return set_account_limits_envelope
